package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// TestRelayCredentialReplayAndLifetime: a credential derives from the
// attempt's ID, side and expiry only: the replay of a join with the same
// idempotency key, and every ask of the host's, return the same one, after
// the clock moved; it expires the allocation margin (--turn-ttl) after the
// attempt, never later, and ttl_s counts down to that.
func TestRelayCredentialReplayAndLifetime(t *testing.T) {
	h := newHarness(t, testLimits(), withRelay(t))
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	first := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	h.clock.Advance(3 * time.Second)
	time.Sleep(1100 * time.Millisecond) // a credential issued "now + TTL" would differ by now
	replay := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 200, "")
	c1, c2 := first.json["relay"].(map[string]any), replay.json["relay"].(map[string]any)
	if c1["username"] != c2["username"] || c1["credential"] != c2["credential"] {
		t.Fatalf("the replay's credential differs: %v, first %v", c2["username"], c1["username"])
	}
	exp, _, _ := strings.Cut(c1["username"].(string), ":")
	e, _ := strconv.ParseInt(exp, 10, 64)
	attemptExp, err := time.Parse(time.RFC3339, first.str("expires_at"))
	if err != nil {
		t.Fatal(err)
	}
	if want := attemptExp.Add(5 * time.Minute).Truncate(time.Second).Unix(); e != want {
		t.Fatalf("credential expires at %d, want the attempt's expiry plus the 5 min margin, %d", e, want)
	}
	if c2["ttl_s"].(float64) >= c1["ttl_s"].(float64) {
		t.Fatalf("ttl_s did not count down: %v then %v", c1["ttl_s"], c2["ttl_s"])
	}
	path := "/v1/listings/" + l.id + "/join-attempts/" + first.str("attempt_id") + "/relay"
	a := h.expect(req{method: "GET", path: path, token: tokPub}, 200, "").json["relay"].(map[string]any)
	b := h.expect(req{method: "GET", path: path, token: tokPub}, 200, "").json["relay"].(map[string]any)
	if a["credential"] != b["credential"] || !strings.HasPrefix(a["username"].(string), exp+":") {
		t.Fatalf("host credentials %v and %v; want one, expiring with the client's", a["username"], b["username"])
	}
	h.secrets = append(h.secrets, first.str("token"), c1["credential"].(string), a["credential"].(string))
}

// TestRelayCredentialCap: one principal gets at most
// RelayCredentialsPerMinute credentials a minute from an instance; the next
// ask is a typed 429 (quota_exceeded, Retry-After) that creates no attempt;
// other principals are not affected.
func TestRelayCredentialCap(t *testing.T) {
	lim := testLimits()
	lim.SubjectAttemptQuota, lim.TenantAttemptQuota = 1000, 1000
	h := newHarness(t, lim, withRelay(t))
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	path := "/v1/listings/" + l.id + "/join-attempts/"
	r := h.expect(joinReq(tokCli, l.id, "cap-0", `{"protocol_version":7}`), 201, "")
	for i := 1; i < RelayCredentialsPerMinute; i++ {
		h.expect(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 200, "")
		h.expect(joinReq(tokBoth, l.id, "cap-"+strconv.Itoa(i), `{"protocol_version":7}`), 201, "")
	}
	// pub-1 has had 119 host credentials and both-1 119 joins; cli-1 one.
	h.expect(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 200, "")
	h.expect(joinReq(tokBoth, l.id, "cap-last", `{"protocol_version":7}`), 201, "")
	h.rejected(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 429, "quota_exceeded")
	h.rejected(joinReq(tokBoth, l.id, "cap-over", `{"protocol_version":7}`), 429, "quota_exceeded")
	used := h.store.Stats().Pools[engine.PoolAttempts-1].Used
	h.rejected(joinReq(tokBoth, l.id, "cap-over-2", `{"protocol_version":7}`), 429, "quota_exceeded")
	if h.store.Stats().Pools[engine.PoolAttempts-1].Used != used {
		t.Fatal("a refused join created an attempt")
	}
	// Another principal still gets its own.
	h.expect(joinReq(tokCli, l.id, "cap-cli", `{"protocol_version":7}`), 201, "")
}
