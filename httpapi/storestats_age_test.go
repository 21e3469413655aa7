package httpapi

import (
	"testing"
	"time"
)

// TestAdminStatsAgeIsHonest: figures GET /v1/admin/stats answers with
// age_ms younger than the time from a change to the request's sending
// (the answer leaves later still) include that change.
func TestAdminStatsAgeIsHonest(t *testing.T) {
	h := newHarness(t, testLimits())
	h.create(tokPub, listingBody("eu", 7, "public"))
	h.expect(req{method: "GET", path: "/readyz"}, 200, "")
	h.create(tokPub2, listingBody("eu", 7, "public"))
	changed := time.Now()
	for {
		sent := time.Since(changed)
		r := h.expect(req{method: "GET", path: "/v1/admin/stats", token: tokGlobalOp}, 200, "")
		age := time.Duration(r.num("age_ms")+1) * time.Millisecond // age_ms is rounded down
		if age < sent {
			pools := r.json["pools"].(map[string]any)
			if n := pools["listings"].(map[string]any)["used"].(float64); n != 2 {
				t.Fatalf("figures under %v old, asked %v after the second listing: %v listings, want 2", age, sent, n)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
