package netio

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Past the tenant bound, reports count under tenant="other"; the tenants
// registered before keep their own series.
func TestPunchMetricsTenantBound(t *testing.T) {
	set := metrics.NewSet()
	tenants := make([]engine.Tenant, 16)
	for i := range tenants {
		tenants[i] = engine.Tenant{Game: "g" + strconv.Itoa(i), Env: "prod"}
	}
	pm := newBoundedPunchMetrics(set, tenants, len(tenants))
	late := engine.Tenant{Game: "late", Env: "prod"}
	pm.record(late, engine.RoleClient, stun.PathFailed, 30000)
	pm.record(tenants[7], engine.RoleHost, stun.PathDirect, 40)
	out := wantMetrics(t, set, "after the records",
		`rendezvous_punch_outcomes_total{tenant="other",role="client",path="failed"} 1`,
		`rendezvous_punch_outcomes_total{tenant="g7/prod",role="host",path="direct"} 1`,
		`rendezvous_punch_connect_seconds_count{tenant="other",path="failed"} 1`)
	if strings.Contains(out, `tenant="late/prod"`) {
		t.Fatal("a tenant past the bound got its own series")
	}
}

// Readers recording for tenants seen for the first time, at once, each
// count exactly once in their tenant's series.
func TestPunchMetricsConcurrentFirstSight(t *testing.T) {
	set := metrics.NewSet()
	pm := newPunchMetrics(set, nil)
	const workers, tenants = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tenants {
				pm.record(engine.Tenant{Game: "g" + strconv.Itoa(i), Env: "prod"}, engine.RoleHost, stun.PathRelayed, uint32(w))
			}
		}()
	}
	wg.Wait()
	for i := range tenants {
		c := set.GetOrCreateCounter(`rendezvous_punch_outcomes_total{tenant="g` + strconv.Itoa(i) + `/prod",role="host",path="relayed"}`)
		if c.Get() != workers {
			t.Fatalf("tenant g%d: %d reports counted, want %d", i, c.Get(), workers)
		}
	}
}
