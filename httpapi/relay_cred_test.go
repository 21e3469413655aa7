package httpapi

import (
	"context"
	"net/netip"
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
	first := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7,"relay_only":true}`), 201, "")
	h.clock.Advance(3 * time.Second)
	time.Sleep(1100 * time.Millisecond) // a credential issued "now + TTL" would differ by now
	replay := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7,"relay_only":true}`), 200, "")
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
	for i := 1; i < DefaultRelayCredentialsPerMinute; i++ {
		h.expect(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 200, "")
		h.expect(joinReq(tokBoth, l.id, "cap-"+strconv.Itoa(i), `{"protocol_version":7,"relay_only":true}`), 201, "")
	}
	// A plain join carries no credential and is not counted.
	h.expect(joinReq(tokBoth, l.id, "cap-plain", `{"protocol_version":7}`), 201, "")
	// pub-1 has had 119 host credentials and both-1 119 joins; cli-1 one.
	h.expect(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 200, "")
	h.expect(joinReq(tokBoth, l.id, "cap-last", `{"protocol_version":7,"relay_only":true}`), 201, "")
	h.rejected(req{method: "GET", path: path + r.str("attempt_id") + "/relay", token: tokPub}, 429, "quota_exceeded")
	h.rejected(joinReq(tokBoth, l.id, "cap-over", `{"protocol_version":7,"relay_only":true}`), 429, "quota_exceeded")
	used := h.store.Stats().Pools[engine.PoolAttempts-1].Used
	h.rejected(joinReq(tokBoth, l.id, "cap-over-2", `{"protocol_version":7,"relay_only":true}`), 429, "quota_exceeded")
	if h.store.Stats().Pools[engine.PoolAttempts-1].Used != used {
		t.Fatal("a refused join created an attempt")
	}
	// Another principal still gets its own.
	h.expect(joinReq(tokCli, l.id, "cap-cli", `{"protocol_version":7,"relay_only":true}`), 201, "")
}

// TestClientRelayCredential: a plain join's client gets its credential
// from GET /v1/join-attempts/{id}/relay once the attempt needs the relay:
// after the introduction (a failed punch), not before it (409), not after a
// side reported a direct path (409), never for another principal's
// attempt (404), the same credential on every ask.
func TestClientRelayCredential(t *testing.T) {
	h := newHarness(t, testLimits(), withRelay(t))
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	id := r.str("attempt_id")
	path := "/v1/join-attempts/" + id + "/relay"
	h.rejected(req{method: "GET", path: path, token: tokCli}, 409, "conflict")
	h.introduce(l, r)
	a := h.expect(req{method: "GET", path: path, token: tokCli}, 200, "")
	wantRelay(t, a.json["relay"], id, 'c')
	b := h.expect(req{method: "GET", path: path, token: tokCli}, 200, "")
	if a.json["relay"].(map[string]any)["credential"] != b.json["relay"].(map[string]any)["credential"] {
		t.Fatal("two asks, two credentials")
	}
	h.secrets = append(h.secrets, r.str("token"), a.json["relay"].(map[string]any)["credential"].(string))
	h.rejected(req{method: "GET", path: path, token: tokBoth}, 404, "not_found")
	h.rejected(req{method: "GET", path: path, token: tokOtherCli}, 404, "not_found")
	h.rejected(req{method: "GET", path: path, token: tokPub}, 403, "forbidden")
	h.rejected(req{method: "GET", path: "/v1/join-attempts/x/relay", token: tokCli}, 400, "invalid_request")
	h.rejected(req{method: "POST", path: path, token: tokCli}, 405, "method_not_allowed")
	// A side connected directly: the relay is not needed.
	h2 := h.expect(joinReq(tokCli, l.id, "j2", `{"protocol_version":7}`), 201, "")
	h.introduce(l, h2)
	hd := engine.Handle{UUID: mustUUID(t, h2.str("handle"))}
	ck := h.keys.AttemptClient(hd)
	ops := []engine.Op{{Kind: engine.OpOutcome, Report: engine.PunchReport{Handle: hd, Role: engine.RoleClient,
		Key: engine.FingerprintOf(&ck), Path: engine.PathDirect, ConnectMillis: 50}}}
	if err := h.served.ApplyBatch(context.Background(), ops); err != nil || !ops[0].Result.OK() {
		t.Fatalf("report: %v %v", ops[0].Result, err)
	}
	h.rejected(req{method: "GET", path: "/v1/join-attempts/" + h2.str("attempt_id") + "/relay", token: tokCli}, 409, "conflict")
	// An ended attempt: none.
	h.clock.Advance(31 * time.Second)
	h.rejected(req{method: "GET", path: path, token: tokCli}, 404, "not_found")
}

// introduce binds both sides of the attempt a join answered, as the
// mediator would on their binds.
func (h *harness) introduce(l listing, join *response) {
	h.t.Helper()
	hd := engine.Handle{UUID: mustUUID(h.t, join.str("handle"))}
	pc, ok := engine.ParseToken(l.presenceToken)
	if !ok {
		h.t.Fatal("presence token")
	}
	hk := engine.HostAttemptCapability(&pc, hd)
	ck := h.keys.AttemptClient(hd)
	for _, b := range []engine.BindAttempt{
		{Handle: hd, Role: engine.RoleHost, Key: engine.FingerprintOf(&hk), Public: netip.MustParseAddrPort("198.51.100.7:40000")},
		{Handle: hd, Role: engine.RoleClient, Key: engine.FingerprintOf(&ck), Public: netip.MustParseAddrPort("203.0.113.9:50000")},
	} {
		if _, r, err := h.served.BindAttemptEndpoint(context.Background(), b); err != nil || !r.OK() {
			h.t.Fatalf("bind %v: %v %v", b.Role, r.Outcome, err)
		}
	}
}
