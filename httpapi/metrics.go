package httpapi

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
)

// Metric names (CONTRACT.md §6). Series are created on first use, once, so
// counting a request never allocates afterwards.
const (
	metricRequests = "rendezvous_http_requests_total"
	metricDuration = "rendezvous_http_request_duration_seconds"
	metricOutcomes = "rendezvous_http_store_outcomes_total"
	metricCommit   = "rendezvous_http_store_duration_seconds"
	metricPoolUsed = "rendezvous_pool_used"
	metricPoolCeil = "rendezvous_pool_ceiling"
	metricQuota    = "rendezvous_quota_limit"
)

// statusClasses are the statuses the API answers with; anything else is
// counted as "other".
var statusClasses = [...]int{200, 201, 202, 204, 400, 401, 403, 404, 405, 408, 409, 410, 413, 415, 429, 431, 500, 503}

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
	duration [numOps]*metrics.Histogram
	commit   [numOps]*metrics.Histogram
	outcomes [numOps][engine.ServiceUnavailable + 1]atomic.Pointer[metrics.Counter]
}

func newHTTPMetrics(set *metrics.Set, store engine.Store, limits engine.Limits) *httpMetrics {
	m := &httpMetrics{set: set}
	for op := range numOps {
		m.duration[op] = set.GetOrCreateHistogram(metricDuration + `{route="` + opNames[op] + `"}`)
		m.commit[op] = set.GetOrCreateHistogram(metricCommit + `{op="` + opNames[op] + `"}`)
	}
	for p := engine.PoolListings; p <= engine.PoolIdempotency; p++ {
		i := int(p) - 1
		set.GetOrCreateGauge(metricPoolUsed+`{pool="`+p.String()+`"}`, func() float64 {
			return float64(store.Stats().Pools[i].Used)
		})
		set.GetOrCreateGauge(metricPoolCeil+`{pool="`+p.String()+`"}`, func() float64 {
			return float64(store.Stats().Pools[i].Ceiling)
		})
	}
	for _, q := range []struct {
		pool engine.Pool
		v    int
	}{
		{engine.QuotaOwnerListings, limits.OwnerListingQuota}, {engine.QuotaTenantListings, limits.TenantListingQuota},
		{engine.QuotaTenantAttempts, limits.TenantAttemptQuota}, {engine.QuotaSubjectAttempts, limits.SubjectAttemptQuota},
		{engine.QuotaTenantIdempotency, limits.TenantIdempotencyQuota},
	} {
		v := float64(q.v)
		set.GetOrCreateGauge(metricQuota+`{quota="`+q.pool.String()+`"}`, func() float64 { return v })
	}
	return m
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
// store call that began at start took (commit latency, CONTRACT.md §6).
func (m *httpMetrics) outcome(op op, o engine.Outcome, start time.Time) {
	m.commit[op].Update(time.Since(start).Seconds())
	if o > engine.ServiceUnavailable {
		return
	}
	c := m.outcomes[op][o].Load()
	if c == nil {
		c = m.set.GetOrCreateCounter(metricOutcomes + `{op="` + opNames[op] + `",outcome="` + o.String() + `"}`)
		m.outcomes[op][o].Store(c)
	}
	c.Inc()
}
