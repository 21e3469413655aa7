package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func TestCreateListing(t *testing.T) {
	h := newHarness(t, testLimits())
	body := listingBody("eu-central", 7, "public")
	post := func(key, body string) req {
		return req{method: "POST", path: "/v1/listings", token: tokPub, body: body, headers: []string{"Idempotency-Key", key}}
	}
	r := h.expect(post("k1", body), 201, "")
	id := r.str("listing_id")
	if _, ok := engine.ParseUUID(id); !ok || strings.ToLower(id) != id {
		t.Fatalf("listing_id %q is not a lowercase UUID", id)
	}
	if r.header["Location"] != "/v1/listings/"+id || r.header["Idempotent-Replay"] != "" {
		t.Fatalf("headers %v", r.header)
	}
	lease := r.json["lease"].(map[string]any)
	pres := r.json["presence"].(map[string]any)
	if lease["version"] != 1.0 || lease["ttl_s"] != 60.0 || len(lease["token"].(string)) != 43 || lease["expires_at"] != "2026-07-16T00:01:00.000Z" {
		t.Fatalf("lease %v", lease)
	}
	if pres["mediator"] != "127.0.0.1:3478" || pres["interval_s"] != 5.0 || pres["ttl_s"] != 20.0 || len(pres["token"].(string)) != 43 {
		t.Fatalf("presence %v", pres)
	}
	// The tokens are the derived capabilities.
	leaseCap := h.keys.Lease(engine.LeaseID{UUID: mustUUID(t, lease["lease_id"].(string))})
	presCap := h.keys.Presence(engine.Handle{UUID: mustUUID(t, pres["handle"].(string))})
	if string(leaseCap.AppendToken(nil)) != lease["token"] || string(presCap.AppendToken(nil)) != pres["token"] {
		t.Fatal("tokens are not the derived capabilities")
	}

	// An exact replay (member order and whitespace differ) returns the same answer.
	reordered := `{"metadata":{"mode":"coop"},"max_players":8,"current_players":1,"trust_mode":"managed_dedicated",
		"visibility":"public","display_name":"Test host","build_version":"1.2.3","protocol_version":7,"region":"eu-central"}`
	before := h.store.Snapshot()
	r2 := h.expect(post("k1", reordered), 200, "")
	if r2.header["Idempotent-Replay"] != "true" || string(r2.body) != string(r.body) {
		t.Fatalf("replay: %v %s\nwant %s", r2.header, r2.body, r.body)
	}
	if h.store.Snapshot() != before {
		t.Fatal("replay changed the store")
	}
	// Same key, different body: 409; other subject's same key is its own namespace.
	h.rejected(post("k1", listingBody("eu-central", 8, "public")), 409, "conflict")
	h.expect(req{method: "POST", path: "/v1/listings", token: tokPub2, body: body, headers: []string{"Idempotency-Key", "k1"}}, 201, "")

	// Request-shape errors, all before the store.
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body}, 400, "invalid_request")
	h.rejected(post("", body), 400, "invalid_request")
	h.rejected(post("key with space", body), 400, "invalid_request")
	h.rejected(post(strings.Repeat("k", 129), body), 400, "invalid_request")
	h.rejected(post("k2", `{"region":"eu"}`), 400, "invalid_request")
	h.rejected(post("k2", strings.Replace(body, `"mode"`, `"mode":"x","mode"`, 1)), 400, "invalid_request")
	h.rejected(post("k2", strings.Replace(body, `"protocol_version":7`, `"protocol_version":"7"`, 1)), 400, "invalid_request")
	h.rejected(post("k2", strings.Replace(body, `"protocol_version":7`, `"protocol_version":7.5`, 1)), 400, "invalid_request")
	h.rejected(post("k2", strings.Replace(body, `"region"`, `"colour":1,"region"`, 1)), 400, "invalid_request")
	p := h.rejected(post("k2", strings.Replace(body, `"current_players":1`, `"current_players":9`, 1)), 400, "invalid_request")
	if !strings.Contains(p.str("detail"), "current_players") {
		t.Fatalf("detail %q does not name the field", p.str("detail"))
	}
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body,
		headers: []string{"Idempotency-Key", "k2", "Content-Type", "text/plain"}}, 415, "unsupported_media_type")
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: body,
		headers: []string{"Idempotency-Key", "k2", "Content-Type", ""}}, 415, "unsupported_media_type")
	h.expect(req{method: "POST", path: "/v1/listings", token: tokPub, body: body,
		headers: []string{"Idempotency-Key", "k3", "Content-Type", "Application/JSON; charset=utf-8"}}, 201, "")
	// Roles: a client may not publish.
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokCli, body: body, headers: []string{"Idempotency-Key", "k9"}}, 403, "forbidden")
}

func TestRenewAndDelete(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	renew := func(token, id, body string) req {
		return req{method: "PUT", path: "/v1/listings/" + id + "/lease", token: token, body: body}
	}
	rb := func(leaseID, tok string, version int, extra string) string {
		return `{"lease_id":"` + leaseID + `","lease_token":"` + tok + `","expected_version":` + itoa(version) + extra + `}`
	}
	h.clock.Advance(10 * time.Second)
	r := h.expect(renew(tokPub, l.id, rb(l.leaseID, l.leaseToken, 1, `,"current_players":5`)), 200, "")
	if r.num("version") != 2 || r.num("ttl_s") != 60 || r.str("expires_at") != "2026-07-16T00:01:10.000Z" {
		t.Fatalf("renew: %s", r.body)
	}
	g := h.expect(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 200, "")
	if g.num("current_players") != 5 {
		t.Fatalf("renewed players not visible: %s", g.body)
	}
	// Uppercase IDs are accepted.
	h.expect(renew(tokPub, strings.ToUpper(l.id), rb(strings.ToUpper(l.leaseID), l.leaseToken, 2, "")), 200, "")

	p := h.rejected(renew(tokPub, l.id, rb(l.leaseID, l.leaseToken, 1, "")), 409, "conflict")
	if p.num("current_version") != 3 {
		t.Fatalf("conflict without current_version: %s", p.body)
	}
	wrongTok := strings.Repeat("A", 43)
	h.rejected(renew(tokPub, l.id, rb(l.leaseID, wrongTok, 3, "")), 404, "not_found")
	h.rejected(renew(tokPub, l.id, rb(l.leaseID, "not-a-token", 3, "")), 404, "not_found")
	h.rejected(renew(tokPub, l.id, rb(engine.NewUUID().String(), l.leaseToken, 3, "")), 404, "not_found")
	h.rejected(renew(tokPub2, l.id, rb(l.leaseID, l.leaseToken, 3, "")), 404, "not_found")     // not the owner
	h.rejected(renew(tokOtherPub, l.id, rb(l.leaseID, l.leaseToken, 3, "")), 404, "not_found") // other tenant
	h.rejected(renew(tokPub, l.id, rb(l.leaseID, l.leaseToken, 3, `,"current_players":9`)), 400, "invalid_request")
	h.rejected(renew(tokPub, l.id, rb(l.leaseID, l.leaseToken, 1, `,"current_players":9`)), 400, "invalid_request") // 400 before 409
	h.rejected(renew(tokPub, "not-a-uuid", rb(l.leaseID, l.leaseToken, 3, "")), 400, "invalid_request")
	h.rejected(renew(tokPub, l.id, `{"lease_id":"`+l.leaseID+`"}`), 400, "invalid_request")
	h.rejected(renew(tokCli, l.id, rb(l.leaseID, l.leaseToken, 3, "")), 403, "forbidden")

	del := func(token, id, leaseID, tok string) req {
		q := req{method: "DELETE", path: "/v1/listings/" + id, token: token}
		if leaseID != "" {
			q.headers = append(q.headers, "Lease-Id", leaseID)
		}
		if tok != "" {
			q.headers = append(q.headers, "Lease-Token", tok)
		}
		return q
	}
	h.rejected(del(tokPub, l.id, l.leaseID, wrongTok), 404, "not_found")
	h.rejected(del(tokPub, l.id, l.leaseID, "bad"), 404, "not_found")
	h.rejected(del(tokPub, l.id, engine.NewUUID().String(), l.leaseToken), 404, "not_found")
	h.rejected(del(tokPub, l.id, "", l.leaseToken), 400, "invalid_request")
	h.rejected(del(tokPub, l.id, "zz", l.leaseToken), 400, "invalid_request")
	h.rejected(del(tokPub, l.id, l.leaseID, ""), 400, "invalid_request")
	h.rejected(del(tokPub2, l.id, l.leaseID, l.leaseToken), 404, "not_found")
	h.rejected(del(tokOtherPub, l.id, l.leaseID, l.leaseToken), 404, "not_found")
	h.rejected(del(tokCli, l.id, l.leaseID, l.leaseToken), 403, "forbidden")
	r = h.expect(del(tokPub, l.id, l.leaseID, l.leaseToken), 204, "")
	if len(r.body) != 0 {
		t.Fatalf("204 with a body: %s", r.body)
	}
	h.rejected(del(tokPub, l.id, l.leaseID, l.leaseToken), 404, "not_found")
	h.rejected(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 404, "not_found")
	// Replaying the creation after the listing is gone: 410.
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: l.body, headers: []string{"Idempotency-Key", l.idemKey}}, 410, "expired")
}

func TestGetListing(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.create(tokPub, listingBody("eu", 7, "unlisted"))
	get := func(token, id string) req { return req{method: "GET", path: "/v1/listings/" + id, token: token} }
	h.rejected(get(tokCli, l.id), 404, "not_found") // no presence yet
	h.bindPresence(l, 1)
	r := h.expect(get(tokCli, strings.ToUpper(l.id)), 200, "")
	want := []string{"listing_id", "region", "protocol_version", "build_version", "display_name", "trust_mode",
		"current_players", "max_players", "metadata", "lease_expires_at", "visibility"}
	if len(r.json) != len(want) {
		t.Fatalf("get: %s", r.body)
	}
	for _, k := range want {
		if _, ok := r.json[k]; !ok {
			t.Fatalf("get lacks %s: %s", k, r.body)
		}
	}
	if r.str("listing_id") != l.id || r.str("visibility") != "unlisted" {
		t.Fatalf("get: %s", r.body)
	}
	for _, secret := range []string{l.leaseID, l.leaseToken, l.presence, l.presenceToken, "pub-1", "198.51.100.7"} {
		if strings.Contains(string(r.body), secret) {
			t.Fatalf("get item reveals %q: %s", secret, r.body)
		}
	}
	h.expect(get(tokPub, l.id), 200, "")
	h.expect(get(tokBoth, l.id), 200, "")
	h.rejected(get(tokOtherCli, l.id), 404, "not_found")
	h.rejected(get(tokOp, l.id), 403, "forbidden")
	h.rejected(get(tokCli, "123"), 400, "invalid_request")
	h.rejected(get(tokCli, engine.NewUUID().String()), 404, "not_found")
	// Presence lapses: not joinable any more.
	h.clock.Advance(21 * time.Second)
	h.rejected(get(tokCli, l.id), 404, "not_found")
}
