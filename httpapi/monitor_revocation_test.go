package httpapi

import (
	"testing"
	"time"
)

// TestMonitoringRoutesShareTheRevocationCheck: a revoked global operator
// is refused at once on every route but the two monitoring reads, and on
// those as soon as the answer they share is older than the figures' age,
// never later.
func TestMonitoringRoutesShareTheRevocationCheck(t *testing.T) {
	const maxAge = 300 * time.Millisecond
	h := newHarness(t, testLimits(), func(cfg *Config) { cfg.StoreStats = NewStoreStats(cfg.Store, maxAge) })
	scrapes := []req{{method: "GET", path: "/v1/admin/stats"}, {method: "GET", path: "/metrics"}}
	for _, q := range scrapes {
		q.token = tokGlobalOp
		h.expect(q, 200, "")
	}
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"gop","ttl_s":60}`}, 200, "")
	h.rejected(req{method: "GET", path: "/v1/whoami", token: tokGlobalOp}, 403, "revoked")
	h.rejected(req{method: "POST", path: "/v1/admin/drain", token: tokGlobalOp}, 403, "revoked")
	time.Sleep(maxAge)
	for _, q := range scrapes {
		q.token = tokGlobalOp
		h.rejected(q, 403, "revoked")
	}
	// A tenant operator cannot scrape at all, whatever is cached.
	h.rejected(req{method: "GET", path: "/v1/admin/stats", token: tokOp}, 403, "forbidden")
}
