package netio

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Punch outcome families, per tenant (docs/contracts/udp.md#metrics): what each
// side of an attempt reported about its connection.
const (
	metricPunchOutcomes = "rendezvous_punch_outcomes_total"
	metricPunchConnect  = "rendezvous_punch_connect_seconds"
)

// otherTenant labels reports of tenants beyond maxPunchTenants. A real
// tenant label always holds a '/', so it cannot collide.
const otherTenant = "other"

// maxPunchTenants bounds the tenants with their own series. Every tenant of
// a report is one a principal was configured for, so the bound is reached
// only by a deployment with that many tenants.
const maxPunchTenants = 4096

// connectBuckets bound the time-to-connect histogram, in seconds: a direct
// punch takes round trips (tens of milliseconds), a relayed path one more
// allocation, giving up the SDK's punch timeout.
var connectBuckets = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60}

// numPunchPaths is the count of reportable paths: stun.PathDirect,
// PathRelayed and PathFailed, which equal engine.PathDirect, PathRelayed and
// PathFailed (tests check it).
const numPunchPaths = 3

var (
	punchRoleNames = [2]string{"host", "client"}
	punchPathNames = [numPunchPaths]string{"direct", "relayed", "failed"}
)

// tenantPunch is one tenant's series, registered at once.
type tenantPunch struct {
	outcomes [2][numPunchPaths]*metrics.Counter // [host, client][path-1]
	connect  [numPunchPaths]*metrics.PrometheusHistogram
}

// punchMetrics holds the per-tenant series. Lookups read an immutable map
// (no lock, no allocation); a tenant seen for the first time is added under
// mu by copying the map. Safe for concurrent use.
type punchMetrics struct {
	set      *metrics.Set
	mu       sync.Mutex
	byTenant atomic.Pointer[map[engine.Tenant]*tenantPunch]
	other    *tenantPunch
	limit    int // tenants with their own series, at most
}

func newPunchMetrics(set *metrics.Set, tenants []engine.Tenant) *punchMetrics {
	return newBoundedPunchMetrics(set, tenants, maxPunchTenants)
}

// newBoundedPunchMetrics is newPunchMetrics with another tenant bound.
func newBoundedPunchMetrics(set *metrics.Set, tenants []engine.Tenant, limit int) *punchMetrics {
	pm := &punchMetrics{set: set, limit: limit}
	pm.other = pm.register(otherTenant)
	m := map[engine.Tenant]*tenantPunch{}
	pm.byTenant.Store(&m)
	pm.add(tenants...)
	return pm
}

func (pm *punchMetrics) register(label string) *tenantPunch {
	tp := &tenantPunch{}
	for r := range tp.outcomes {
		for p := range tp.outcomes[r] {
			tp.outcomes[r][p] = pm.set.GetOrCreateCounter(fmt.Sprintf(`%s{tenant=%q,role=%q,path=%q}`,
				metricPunchOutcomes, label, punchRoleNames[r], punchPathNames[p]))
		}
	}
	for p := range tp.connect {
		tp.connect[p] = pm.set.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`%s{tenant=%q,path=%q}`,
			metricPunchConnect, label, punchPathNames[p]), connectBuckets)
	}
	return tp
}

// add registers the series of tenants not registered yet (at 0).
func (pm *punchMetrics) add(tenants ...engine.Tenant) {
	pm.mu.Lock()
	defer pm.mu.Unlock()
	cur := *pm.byTenant.Load()
	next := make(map[engine.Tenant]*tenantPunch, len(cur)+len(tenants))
	maps.Copy(next, cur)
	for _, t := range tenants {
		if _, ok := next[t]; !ok && len(next) < pm.limit {
			next[t] = pm.register(t.Game + "/" + t.Env)
		}
	}
	if len(next) != len(cur) {
		pm.byTenant.Store(&next)
	}
}

// tenant returns t's series, registering them on first sight (bounded by
// maxPunchTenants; beyond it, the "other" series).
func (pm *punchMetrics) tenant(t engine.Tenant) *tenantPunch {
	if tp, ok := (*pm.byTenant.Load())[t]; ok {
		return tp
	}
	pm.add(t)
	if tp, ok := (*pm.byTenant.Load())[t]; ok {
		return tp
	}
	return pm.other
}

// record counts one side's first outcome report. Reports are at most two
// per attempt, so they update the shared series at once instead of through
// the batch tally.
func (pm *punchMetrics) record(t engine.Tenant, role engine.Role, path byte, millis uint32) {
	if path < stun.PathDirect || path > stun.PathFailed {
		return
	}
	r := 1
	if role == engine.RoleHost {
		r = 0
	}
	tp := pm.tenant(t)
	tp.outcomes[r][path-1].Inc()
	tp.connect[path-1].Update(float64(millis) / 1000)
}
