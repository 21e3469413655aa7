package main

import (
	"net/http"
	"testing"

	"github.com/rendezvous/rendezvous/httpapi"
)

// The --dev operators against the real binary: the tenant operator reads
// its tenant's usage and is refused the instance-wide routes (changing
// nothing); the global operator reads instance stats and drains.
func TestE2EOperatorScope(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, append(storeArgs, "--drain-window", "1s")...)
		tenantOp, globalOp := p.tokens["operator"], p.tokens[httpapi.DevGlobalOperator]
		p.publish("e2e-scope-1", "scoped")

		type pool struct{ Used, Quota int }
		var usage struct {
			Game  string          `json:"game_id"`
			Env   string          `json:"environment_id"`
			Pools map[string]pool `json:"pools"`
		}
		p.call("GET", "/v1/admin/tenant-stats", tenantOp, nil).expect(t, "tenant-stats", http.StatusOK, &usage)
		if usage.Game != "demo" || usage.Env != "dev" || usage.Pools["listings"].Used != 1 || usage.Pools["listings"].Quota < 1 ||
			usage.Pools["attempts"].Used != 0 || usage.Pools["idempotency"].Used != 1 {
			t.Fatalf("tenant-stats %+v", usage)
		}
		for _, c := range []struct{ method, path string }{{"POST", "/v1/admin/drain"}, {"GET", "/v1/admin/stats"}} {
			r := p.call(c.method, c.path, tenantOp, nil)
			if r.status != http.StatusForbidden || r.problemCode(t) != "forbidden" {
				t.Fatalf("tenant operator %s %s: %d %s, want 403 forbidden", c.method, c.path, r.status, r.body)
			}
		}
		// The refused drain changed nothing: still ready, publishing works.
		p.call("GET", "/readyz", "", nil).expect(t, "readyz after a refused drain", http.StatusOK, nil)
		p.publish("e2e-scope-2", "still open")
		if r := p.call("GET", "/v1/admin/tenant-stats?game_id=demo&environment_id=dev", globalOp, nil); r.status != http.StatusOK {
			t.Fatalf("global operator tenant-stats: %d %s", r.status, r.body)
		}

		var stats struct {
			Draining bool `json:"draining"`
			Pools    map[string]struct {
				Used int `json:"used"`
			} `json:"pools"`
		}
		p.freshStats(t, globalOp, &stats) // the readiness probe above read the figures before the second listing
		if stats.Draining || stats.Pools["listings"].Used != 2 {
			t.Fatalf("stats %+v", stats)
		}
		p.call("POST", "/v1/admin/drain", globalOp, nil).expect(t, "drain", http.StatusAccepted, nil)
		p.waitReadiness(http.StatusServiceUnavailable)
	})
}
