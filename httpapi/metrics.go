package httpapi

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
)

// Metric names (docs/contracts/http.md#health-and-metrics). Every family needs a HELP text in
// metricHelp: the exposition test (promtool check metrics) fails without
// one. Request counters are created on first use, once, so counting a
// request never allocates afterwards; every store series (pool gauges,
// outcome counters, latency histograms) exists from the start, at 0.
const (
	metricRequests = "rendezvous_http_requests_total"
	metricDuration = "rendezvous_http_request_duration_seconds"
	metricOutcomes = "rendezvous_http_store_outcomes_total"
	metricCommit   = "rendezvous_http_store_duration_seconds"
	metricPoolUsed = "rendezvous_pool_used"
	metricPoolCeil = "rendezvous_pool_ceiling"
	metricQuota    = "rendezvous_quota_limit"
	metricStatsAge = "rendezvous_store_stats_age_seconds"
)

var metricHelp = map[string]string{
	metricRequests: "HTTP requests answered, by route and status code.",
	metricDuration: "HTTP request latency in seconds, by route.",
	metricOutcomes: "Store transitions made by the HTTP API, by operation and typed outcome.",
	metricCommit:   "Commit latency in seconds: time in the store call of each HTTP transition, by operation.",
	metricPoolUsed: "Entries held in each bounded store pool.",
	metricPoolCeil: "Configured ceiling of each bounded store pool.",
	metricQuota:    "Configured policy quotas.",
	metricPrincipals: "Always 1; the label is a prefix of the SHA-256 of the principals this instance serves " +
		"(subjects, tenants, roles, token hashes): instances of one deployment should all show the same.",
	metricStatsAge: "Age in seconds of the store figures scrapes, probes and admin stats show: read from the store at most once a second, shared by every reader.",

	metricConnsOpen:    "HTTP connections open now (counted by the bounding listener).",
	metricConnsRefused: "HTTP connections closed on accept, by reason: max_conns or max_conns_per_ip.",
	metricAcceptErrors: "Failed accepts of HTTP connections (e.g. no file descriptor left), each retried after a backoff.",
}

// MetricHelp is the HELP text of a metric family this package exports, or
// "" for a family it does not know.
func MetricHelp(family string) string { return metricHelp[family] }

// latencyBuckets are the upper bounds, in seconds, of the HTTP latency
// histograms: the store is in memory, so answers take tens of microseconds to
// a few milliseconds; the upper buckets catch a stalled process.
var latencyBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
}

// storeOps are the operations that make a store transition (and call
// outcome).
var storeOps = [...]op{
	opBrowse, opCreateListing, opGetListing, opDeleteListing, opRenewLease,
	opCreateAttempt, opAdminRevokeListing, opAdminRevokePrincipal,
	opGetAttempt, opHostRelay, opQuickJoin,
}

// statusClasses are the statuses the API answers with; anything else is
// counted as "other".
var statusClasses = [...]int{200, 201, 202, 204, 400, 401, 403, 404, 405, 408, 409, 410, 413, 415, 422, 429, 431, 500, 503}

const numStatus = len(statusClasses) + 1

func statusIndex(code int) int {
	for i, c := range statusClasses {
		if c == code {
			return i
		}
	}
	return len(statusClasses)
}

// httpMetrics holds the API's series in a metrics.Set. Safe for concurrent use.
type httpMetrics struct {
	set      *metrics.Set
	requests [numOps][numStatus]atomic.Pointer[metrics.Counter]
	duration [numOps]*metrics.PrometheusHistogram
	// commit and outcomes are set for storeOps only.
	commit   [numOps]*metrics.PrometheusHistogram
	outcomes [numOps][engine.Full + 1]*metrics.Counter
}

func newHTTPMetrics(set *metrics.Set, stats *StoreStats, limits engine.Limits) *httpMetrics {
	m := &httpMetrics{set: set}
	for op := range numOps {
		m.duration[op] = set.GetOrCreatePrometheusHistogramExt(metricDuration+`{route="`+opNames[op]+`"}`, latencyBuckets)
	}
	for _, op := range storeOps {
		m.commit[op] = set.GetOrCreatePrometheusHistogramExt(metricCommit+`{op="`+opNames[op]+`"}`, latencyBuckets)
		for o := range m.outcomes[op] {
			m.outcomes[op][o] = set.GetOrCreateCounter(metricOutcomes + `{op="` + opNames[op] + `",outcome="` + engine.Outcome(o).String() + `"}`)
		}
	}
	for p := engine.PoolListings; p <= engine.PoolIdempotency; p++ {
		i := int(p) - 1
		set.GetOrCreateGauge(metricPoolUsed+`{pool="`+p.String()+`"}`, func() float64 {
			st, _ := stats.Stats()
			return float64(st.Pools[i].Used)
		})
		set.GetOrCreateGauge(metricPoolCeil+`{pool="`+p.String()+`"}`, func() float64 {
			st, _ := stats.Stats()
			return float64(st.Pools[i].Ceiling)
		})
	}
	set.GetOrCreateGauge(metricStatsAge, func() float64 { return stats.Age().Seconds() })
	for _, q := range quotaLimits(&limits) {
		v := float64(q.limit)
		set.GetOrCreateGauge(metricQuota+`{quota="`+q.pool.String()+`"}`, func() float64 { return v })
	}
	return m
}

// quotaLimit is a policy quota and the limit configured for it.
type quotaLimit struct {
	pool  engine.Pool
	limit int
}

// quotaLimits lists the policy quotas l configures, as the quota gauges and
// GET /v1/admin/stats report them (in the order of its "quotas" object).
func quotaLimits(l *engine.Limits) [6]quotaLimit {
	return [...]quotaLimit{
		{engine.QuotaOwnerListings, l.OwnerListingQuota}, {engine.QuotaSubjectAttempts, l.SubjectAttemptQuota},
		{engine.QuotaTenantListings, l.TenantListingQuota}, {engine.QuotaTenantAttempts, l.TenantAttemptQuota},
		{engine.QuotaTenantIdempotency, l.TenantIdempotencyQuota}, {engine.QuotaSubjectIdempotency, l.SubjectIdempotencyQuota},
	}
}

// request counts one answered request and its latency.
func (m *httpMetrics) request(op op, status int, d time.Duration) {
	si := statusIndex(status)
	c := m.requests[op][si].Load()
	if c == nil {
		code := "other"
		if si < len(statusClasses) {
			code = strconv.Itoa(statusClasses[si])
		}
		c = m.set.GetOrCreateCounter(metricRequests + `{route="` + opNames[op] + `",status="` + code + `"}`)
		m.requests[op][si].Store(c)
	}
	c.Inc()
	m.duration[op].Update(d.Seconds())
}

// outcome counts one store transition's outcome and records how long the
// store call that began at start took (commit latency, docs/contracts/http.md#health-and-metrics).
// op must be one of storeOps.
func (m *httpMetrics) outcome(op op, o engine.Outcome, start time.Time) {
	if m.commit[op] == nil {
		panic("BUG: a store outcome of " + opNames[op] + ", which is not in storeOps")
	}
	m.commit[op].Update(time.Since(start).Seconds())
	if o > engine.Full {
		return
	}
	m.outcomes[op][o].Inc()
}
