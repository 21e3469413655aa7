package httpapi

import (
	"strings"
	"testing"
)

// TestMetricsNeedGlobalOperator: /metrics on the API listener names every
// tenant, so it is not public: no token is 401, a client, a publisher and a
// tenant operator are 403, a global operator gets the text. Neither refusal
// names a tenant.
func TestMetricsNeedGlobalOperator(t *testing.T) {
	h := newHarness(t, testLimits())
	for _, c := range []struct {
		tok    string
		status int
		code   string
	}{{"", 401, "unauthorized"}, {tokCli, 403, "forbidden"}, {tokPub, 403, "forbidden"}, {tokOp, 403, "forbidden"}} {
		for _, m := range []string{"GET", "HEAD"} {
			r := h.do(req{method: m, path: "/metrics", token: c.tok})
			if r.status != c.status {
				t.Fatalf("%s /metrics with %q: %d, want %d", m, c.tok, r.status, c.status)
			}
			if m == "GET" && (r.str("code") != c.code || strings.Contains(string(r.body), "demo")) {
				t.Fatalf("%s /metrics with %q: %s", m, c.tok, r.body)
			}
		}
	}
	r := h.expect(req{method: "GET", path: "/metrics", token: tokGlobalOp}, 200, "")
	if !strings.Contains(string(r.body), `tenant="demo/dev"`) && !strings.Contains(string(r.body), "rendezvous_") {
		t.Fatalf("global operator's /metrics:\n%.400s", r.body)
	}
}
