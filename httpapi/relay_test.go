package httpapi

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/turncred"
)

const testRelaySecret = "httpapi-relay-test-secret"

var testRelayURLs = []string{"turn:relay.test:3478?transport=udp", "turns:relay.test:5349?transport=tcp"}

func withRelay(t *testing.T) func(*Config) {
	iss, err := turncred.New(testRelayURLs, []byte(testRelaySecret), 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return func(c *Config) { c.Relay = iss }
}

func joinReq(token, listingID, key, body string) req {
	return req{method: "POST", path: "/v1/listings/" + listingID + "/join-attempts", token: token, body: body,
		headers: []string{"Idempotency-Key", key}}
}

// wantRelay checks a "relay" object: every URL, a username scoped to the
// attempt and side expiring ttl from now, the coturn password of it.
func wantRelay(t *testing.T, v any, attemptID string, side byte) {
	t.Helper()
	r, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("relay member %v", v)
	}
	urls, _ := r["urls"].([]any)
	if len(urls) != len(testRelayURLs) || urls[0] != testRelayURLs[0] || urls[1] != testRelayURLs[1] {
		t.Fatalf("relay urls %v", urls)
	}
	user, _ := r["username"].(string)
	cred, _ := r["credential"].(string)
	exp, rest, ok := strings.Cut(user, ":")
	if !ok || rest != attemptID+"."+string(side) {
		t.Fatalf("username %q, want <expiry>:%s.%c", user, attemptID, side)
	}
	// The expiry is the attempt's (on the harness's wall clock) plus the
	// allocation margin: TestRelayCredentialReplayAndLifetime checks it.
	if _, err := strconv.ParseInt(exp, 10, 64); err != nil {
		t.Fatalf("username expiry %q", exp)
	}
	if cred != turncred.Password([]byte(testRelaySecret), user) {
		t.Fatal("credential is not the coturn password of the username")
	}
	if ttl, _ := r["ttl_s"].(float64); ttl < 295 || ttl > 331 {
		t.Fatalf("ttl_s %v", r["ttl_s"])
	}
}

func TestRelayOff(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	if _, ok := r.json["relay"]; ok || r.json["relay_only"] != false {
		t.Fatalf("join with relay off: %s", r.body)
	}
	h.secrets = append(h.secrets, r.str("token"))
	h.rejected(joinReq(tokCli, l.id, "j2", `{"protocol_version":7,"relay_only":true}`), 409, "relay_unavailable")
	body := strings.Replace(listingBody("eu", 7, "public"), `"metadata"`, `"relay_only_joins":true,"metadata"`, 1)
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body, headers: []string{"Idempotency-Key", "rl"}}, 409, "relay_unavailable")
	h.rejected(req{method: "GET", path: "/v1/listings/" + l.id + "/join-attempts/" + r.str("attempt_id") + "/relay", token: tokPub}, 409, "relay_unavailable")
	// relay_only_joins false is the default, accepted.
	body = strings.Replace(listingBody("eu", 7, "public"), `"metadata"`, `"relay_only_joins":false,"metadata"`, 1)
	h.expect(req{method: "POST", path: "/v1/listings", token: tokPub, body: body, headers: []string{"Idempotency-Key", "rl2"}}, 201, "")
}

func TestRelayCredentials(t *testing.T) {
	h := newHarness(t, testLimits(), withRelay(t))
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	id := r.str("attempt_id")
	h.secrets = append(h.secrets, r.str("token"))
	// A plain join needs no relay yet: its client asks after a failed
	// punch (TestClientRelayCredential).
	if _, ok := r.json["relay"]; ok || r.json["relay_only"] != false {
		t.Fatalf("plain join: %s", r.body)
	}

	// The host's credential, by attempt ID and by handle, to the owner only.
	path := "/v1/listings/" + l.id + "/join-attempts/"
	for _, seg := range []string{id, r.str("handle"), strings.ToUpper(id)} {
		hr := h.expect(req{method: "GET", path: path + seg + "/relay", token: tokPub}, 200, "")
		wantRelay(t, hr.json["relay"], id, 'h')
		if hr.json["relay_only"] != false {
			t.Fatalf("host relay_only %v", hr.json["relay_only"])
		}
		h.secrets = append(h.secrets, hr.json["relay"].(map[string]any)["credential"].(string))
	}
	h.rejected(req{method: "GET", path: path + id + "/relay", token: tokPub2}, 404, "not_found")
	h.rejected(req{method: "GET", path: path + id + "/relay", token: tokBoth}, 404, "not_found")
	h.rejected(req{method: "GET", path: path + id + "/relay", token: tokOtherPub}, 404, "not_found")
	h.rejected(req{method: "GET", path: path + id + "/relay", token: tokCli}, 403, "forbidden")
	h.rejected(req{method: "GET", path: path + engine.NewUUID().String() + "/relay", token: tokPub}, 404, "not_found")
	h.rejected(req{method: "GET", path: path + "x/relay", token: tokPub}, 400, "invalid_request")
	h.rejected(req{method: "GET", path: "/v1/listings/x/join-attempts/" + id + "/relay", token: tokPub}, 400, "invalid_request")
	h.rejected(req{method: "POST", path: path + id + "/relay", token: tokPub}, 405, "method_not_allowed")
	// An attempt of another listing of the same owner.
	l2 := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.rejected(req{method: "GET", path: "/v1/listings/" + l2.id + "/join-attempts/" + id + "/relay", token: tokPub}, 404, "not_found")

	// Ended attempts get no credential.
	h.clock.Advance(31 * time.Second)
	h.expect(req{method: "GET", path: path + id + "/relay", token: tokPub}, 404, "not_found")

	if logs := h.logs.String(); strings.Contains(logs, testRelaySecret) {
		t.Fatal("the relay secret is in the log")
	}
	for _, s := range h.secrets {
		if strings.Contains(h.logs.String(), s) {
			t.Fatal("a token or credential is in the log")
		}
	}
}

func TestRelayOnlyJoins(t *testing.T) {
	h := newHarness(t, testLimits(), withRelay(t))
	// Asked by the client.
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7,"relay_only":true}`), 201, "")
	if r.json["relay_only"] != true {
		t.Fatalf("relay_only join: %s", r.body)
	}
	wantRelay(t, r.json["relay"], r.str("attempt_id"), 'c')
	hr := h.expect(req{method: "GET", path: "/v1/listings/" + l.id + "/join-attempts/" + r.str("handle") + "/relay", token: tokPub}, 200, "")
	if hr.json["relay_only"] != true {
		t.Fatalf("host relay of a relay-only attempt: %s", hr.body)
	}
	// The same key with relay_only false is another request: 409 conflict.
	h.rejected(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 409, "conflict")

	// Required by the listing, and echoed in its document.
	body := strings.Replace(listingBody("eu", 7, "public"), `"metadata"`, `"relay_only_joins":true,"metadata"`, 1)
	rl := h.visible(tokPub, body)
	g := h.expect(req{method: "GET", path: "/v1/listings/" + rl.id, token: tokCli}, 200, "")
	if g.json["relay_only_joins"] != true {
		t.Fatalf("listing document: %s", g.body)
	}
	if g := h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 200, ""); g.json["relay_only_joins"] != nil {
		t.Fatalf("an ordinary listing's document: %s", g.body)
	}
	r = h.expect(joinReq(tokCli, rl.id, "j2", `{"protocol_version":7}`), 201, "")
	if r.json["relay_only"] != true {
		t.Fatalf("join of a relay-only listing: %s", r.body)
	}
	st := h.expect(req{method: "GET", path: "/v1/join-attempts/" + r.str("attempt_id"), token: tokCli}, 200, "")
	if st.json["relay_only"] != true {
		t.Fatalf("status: %s", st.body)
	}
}

// A listing that requires relay-only joins, served by an instance whose
// relay is off (a shared store): its joins are refused 409.
func TestRelayOnlyListingWithRelayOff(t *testing.T) {
	h := newHarness(t, testLimits())
	spec := engine.ListingSpec{Region: "eu", ProtocolVersion: 7, BuildVersion: "1", DisplayName: "x",
		Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8, RelayOnlyJoins: true}
	v, res, err := h.store.CreateListing(context.Background(), engine.CreateListing{
		Tenant: testTenant, Owner: "pub-1", IdempotencyKey: "elsewhere", Spec: spec, Doc: listingDoc(&spec)})
	if err != nil || !res.OK() {
		t.Fatal(res, err)
	}
	pc := h.keys.Presence(v.Presence)
	if _, res, err = h.store.BindHostPresence(context.Background(), engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: 1,
		Public: netip.MustParseAddrPort("198.51.100.7:40000")}); err != nil || !res.OK() {
		t.Fatal(res, err)
	}
	h.expect(joinReq(tokCli, v.ID.String(), "j1", `{"protocol_version":7}`), 409, "relay_unavailable")
	if h.offers.count() != 0 {
		t.Fatal("an OFFER was sent for an attempt that cannot connect")
	}
}

func TestAttemptStatusRoute(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(joinReq(tokCli, l.id, "j1", `{"protocol_version":7}`), 201, "")
	id := r.str("attempt_id")
	path := "/v1/join-attempts/" + id
	for _, tok := range []string{tokCli, tokPub} {
		st := h.expect(req{method: "GET", path: path, token: tok}, 200, "")
		if st.str("attempt_id") != id || st.str("listing_id") != l.id || st.str("state") != "created" ||
			st.str("reason") != "awaiting_offer" || st.json["relay_only"] != false || st.str("expires_at") != r.str("expires_at") ||
			st.json["host_bound"] != false || st.json["client_bound"] != false ||
			st.json["host_relayed"] != false || st.json["client_relayed"] != false {
			t.Fatalf("status: %s", st.body)
		}
		if _, ok := st.json["host_outcome"]; ok {
			t.Fatal("an outcome before any report")
		}
	}
	for _, tok := range []string{tokPub2, tokBoth, tokOtherCli, tokOtherPub} {
		h.rejected(req{method: "GET", path: path, token: tok}, 404, "not_found")
	}
	h.rejected(req{method: "GET", path: path, token: tokOp}, 403, "forbidden")
	h.rejected(req{method: "GET", path: "/v1/join-attempts/" + engine.NewUUID().String(), token: tokCli}, 404, "not_found")
	h.rejected(req{method: "GET", path: "/v1/join-attempts/nope", token: tokCli}, 400, "invalid_request")
	h.rejected(req{method: "DELETE", path: path, token: tokCli}, 405, "method_not_allowed")
	h.expect(req{method: "GET", path: "/v1/join-attempts/", token: tokCli}, 404, "not_found")

	// The client binds; then an outcome; then the lifetime ends.
	hd := engine.Handle{UUID: mustUUID(t, r.str("handle"))}
	ck := h.keys.AttemptClient(hd)
	if _, res, err := h.store.BindAttemptEndpoint(context.Background(), engine.BindAttempt{Handle: hd, Role: engine.RoleClient,
		Key: engine.FingerprintOf(&ck), Public: netip.MustParseAddrPort("203.0.113.9:5000")}); err != nil || !res.OK() {
		t.Fatal(res, err)
	}
	ops := []engine.Op{{Kind: engine.OpOutcome, Report: engine.PunchReport{Handle: hd, Role: engine.RoleClient,
		Key: engine.FingerprintOf(&ck), Path: engine.PathFailed, ConnectMillis: 5000}}}
	if err := h.store.ApplyBatch(context.Background(), ops); err != nil || !ops[0].Result.OK() {
		t.Fatal(ops[0].Result, err)
	}
	st := h.expect(req{method: "GET", path: path, token: tokCli}, 200, "")
	co, _ := st.json["client_outcome"].(map[string]any)
	if st.str("state") != "client_bound" || st.str("reason") != "awaiting_host_bind" || st.json["client_bound"] != true ||
		co["path"] != "failed" || co["connect_ms"] != 5000.0 || st.json["host_outcome"] != nil {
		t.Fatalf("status after bind and report: %s", st.body)
	}
	h.clock.Advance(31 * time.Second)
	st = h.expect(req{method: "GET", path: path, token: tokPub}, 200, "")
	if st.str("state") != "expired" || st.str("reason") != "awaiting_host_bind" {
		t.Fatalf("status after the lifetime: %s", st.body)
	}
}
