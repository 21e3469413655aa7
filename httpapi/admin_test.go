package httpapi

import (
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestAdminRevokeListing(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	o := h.visible(tokOtherPub, listingBody("eu", 7, "public"))
	revoke := func(token, id string) req {
		return req{method: "DELETE", path: "/v1/admin/listings/" + id, token: token}
	}
	h.rejected(revoke(tokOp, o.id), 404, "not_found") // another tenant's listing
	h.rejected(revoke(tokOp, engine.NewUUID().String()), 404, "not_found")
	h.rejected(revoke(tokOp, "nope"), 400, "invalid_request")
	h.rejected(revoke(tokPub, l.id), 403, "forbidden")
	h.expect(revoke(tokOp, l.id), 204, "")
	h.rejected(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 404, "not_found")
	h.expect(revoke(tokGlobalOp, o.id), 204, "") // a global operator acts in any tenant
	h.rejected(revoke(tokGlobalOp, o.id), 404, "not_found")
}

func TestAdminRevokePrincipal(t *testing.T) {
	h := newHarness(t, testLimits()) // MaxRevocations 2
	h.visible(tokPub, listingBody("eu", 7, "public"))
	o := h.visible(tokOtherPub, listingBody("eu", 7, "public"))
	rev := func(token, body string) req {
		return req{method: "POST", path: "/v1/admin/revocations", token: token, body: body}
	}
	h.rejected(rev(tokOp, `{"subject":"opub-1","ttl_s":60}`), 404, "not_found") // other tenant's subject
	h.rejected(rev(tokOp, `{"subject":"nobody","ttl_s":60}`), 404, "not_found")
	h.rejected(rev(tokOp, `{"subject":"pub-1","ttl_s":0}`), 400, "invalid_request")
	h.rejected(rev(tokOp, `{"subject":"pub-1","ttl_s":601}`), 400, "invalid_request")
	h.rejected(rev(tokOp, `{"subject":"pub-1","ttl_s":"60"}`), 400, "invalid_request")
	h.rejected(rev(tokOp, `{"subject":"pub-1"}`), 400, "invalid_request")
	h.rejected(rev(tokOp, `{"subject":"pub-1","ttl_s":60,"why":"x"}`), 400, "invalid_request")
	h.rejected(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"pub-1","ttl_s":60}`,
		headers: []string{"Content-Type", "text/json"}}, 415, "unsupported_media_type")
	r := h.expect(rev(tokOp, `{"subject":"pub-2","ttl_s":60}`), 200, "")
	if r.num("removed") != 0 {
		t.Fatalf("removed %s", r.body)
	}
	r = h.expect(rev(tokGlobalOp, `{"subject":"nobody-known","ttl_s":600}`), 200, "") // global: any subject
	// The revocation pool (2) is full: 503 and nothing removed.
	p := h.rejected(rev(tokGlobalOp, `{"subject":"opub-1","ttl_s":60}`), 503, "capacity_exceeded")
	if !strings.Contains(p.str("detail"), "revocations") {
		t.Fatalf("detail %q", p.str("detail"))
	}
	h.expect(req{method: "GET", path: "/v1/listings/" + o.id, token: tokOtherCli}, 200, "")
}

func TestDrainStatsReadiness(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	r := h.expect(req{method: "GET", path: "/readyz"}, 200, "")
	if string(r.body) != `{"status":"ready"}` {
		t.Fatalf("readyz %s", r.body)
	}
	h.expect(req{method: "GET", path: "/livez"}, 200, "")
	r = h.expect(req{method: "GET", path: "/v1/admin/stats", token: tokGlobalOp}, 200, "")
	pools := r.json["pools"].(map[string]any)
	if r.str("instance_id") != h.store.InstanceID().String() || r.json["available"] != true || r.json["draining"] != false || len(pools) != 6 {
		t.Fatalf("stats %s", r.body)
	}
	listings := pools["listings"].(map[string]any)
	if listings["used"] != 1.0 || listings["ceiling"] != 6.0 {
		t.Fatalf("stats %s", r.body)
	}
	for _, name := range []string{"listings", "presence", "attempts", "replay", "revocations", "idempotency"} {
		if _, ok := pools[name]; !ok {
			t.Fatalf("stats lacks pool %s: %s", name, r.body)
		}
	}
	quotas := r.json["quotas"].(map[string]any)
	lim := testLimits()
	for name, want := range map[string]int{"owner_listings": lim.OwnerListingQuota, "subject_attempts": lim.SubjectAttemptQuota,
		"tenant_listings": lim.TenantListingQuota, "tenant_attempts": lim.TenantAttemptQuota, "tenant_idempotency": lim.TenantIdempotencyQuota,
		"subject_idempotency": lim.SubjectIdempotencyQuota} {
		if quotas[name] != float64(want) {
			t.Fatalf("stats quota %s = %v, want %d: %s", name, quotas[name], want, r.body)
		}
	}
	if len(quotas) != 6 {
		t.Fatalf("stats quotas %s", r.body)
	}
	h.rejected(req{method: "GET", path: "/v1/admin/stats", token: tokCli}, 403, "forbidden")
	h.rejected(req{method: "POST", path: "/v1/admin/drain", token: tokPub}, 403, "forbidden")
	// Drain and instance stats concern every tenant: a tenant operator may not.
	for _, tok := range []string{tokOp, tokOtherOp} {
		p := h.rejected(req{method: "POST", path: "/v1/admin/drain", token: tok}, 403, "forbidden")
		if !strings.Contains(p.str("detail"), "global operator") {
			t.Fatalf("detail %q", p.str("detail"))
		}
		h.rejected(req{method: "GET", path: "/v1/admin/stats", token: tok}, 403, "forbidden")
	}
	h.expect(req{method: "GET", path: "/readyz"}, 200, "")

	h.expect(req{method: "POST", path: "/v1/admin/drain", token: tokGlobalOp}, 202, "")
	h.expect(req{method: "POST", path: "/v1/admin/drain", token: tokGlobalOp}, 202, "") // idempotent
	r = h.expect(req{method: "GET", path: "/readyz"}, 503, "")
	if string(r.body) != `{"status":"draining"}` || r.header["Retry-After"] == "" {
		t.Fatalf("readyz while draining: %v %s", r.header, r.body)
	}
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "d1"}}, 503, "draining")
	h.rejected(req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}, 503, "draining")
	h.rejected(req{method: "POST", path: "/v1/listings/" + l.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "d2"}}, 503, "draining")
	r = h.expect(req{method: "GET", path: "/v1/admin/stats", token: tokGlobalOp}, 200, "")
	if r.json["draining"] != true {
		t.Fatalf("stats %s", r.body)
	}
}

func TestUnavailable(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.store.MarkUnavailable()
	r := h.expect(req{method: "GET", path: "/readyz"}, 503, "")
	if string(r.body) != `{"status":"unavailable"}` {
		t.Fatalf("readyz %s", r.body)
	}
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "u1"}}, 503, "service_unavailable")
	h.rejected(req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}, 503, "service_unavailable")
	r = h.expect(req{method: "GET", path: "/v1/admin/stats", token: tokGlobalOp}, 200, "")
	if r.json["available"] != false {
		t.Fatalf("stats %s", r.body)
	}
}

func TestCapacity(t *testing.T) {
	h := newHarness(t, testLimits()) // MaxListings 6, OwnerListingQuota 3
	for range 3 {
		h.create(tokPub, listingBody("eu", 7, "public"))
	}
	p := h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "q1"}}, 429, "quota_exceeded")
	if p.header["Retry-After"] == "" {
		t.Fatal("429 without Retry-After")
	}
	for range 3 {
		h.create(tokPub2, listingBody("eu", 7, "public"))
	}
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokBoth, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "q2"}}, 503, "capacity_exceeded")
	// Both full: the global pool (503) wins over the quota (429).
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "q3"}}, 503, "capacity_exceeded")
}
