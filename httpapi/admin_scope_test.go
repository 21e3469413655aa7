package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// tenantStats is GET /v1/admin/tenant-stats with an optional query.
func tenantStats(token, query string) req {
	path := "/v1/admin/tenant-stats"
	if query != "" {
		path += "?" + query
	}
	return req{method: "GET", path: path, token: token}
}

// wantTenantStats requires the tenant and the used counts of its pools
// (listings, attempts, idempotency), each with the quota from limits.
func wantTenantStats(t *testing.T, r *response, tenant engine.Tenant, l engine.Limits, used [3]int) {
	t.Helper()
	if r.str("game_id") != tenant.Game || r.str("environment_id") != tenant.Env {
		t.Fatalf("tenant-stats of the wrong tenant: %s", r.body)
	}
	pools, _ := r.json["pools"].(map[string]any)
	q := l.TenantQuotas()
	for i, p := range []struct {
		name  string
		quota int
	}{{"listings", q.Listings.Ceiling}, {"attempts", q.Attempts.Ceiling}, {"idempotency", q.Idempotency.Ceiling}} {
		got, _ := pools[p.name].(map[string]any)
		if got["used"] != float64(used[i]) || got["quota"] != float64(p.quota) {
			t.Fatalf("pool %s = %v, want used %d quota %d: %s", p.name, got, used[i], p.quota, r.body)
		}
	}
	if len(pools) != 3 || r.num("owner_listing_quota") != float64(l.OwnerListingQuota) ||
		r.num("subject_attempt_quota") != float64(l.SubjectAttemptQuota) {
		t.Fatalf("tenant-stats %s", r.body)
	}
}

func TestAdminTenantStats(t *testing.T) {
	l := testLimits()
	h := newHarness(t, l)
	own := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.visible(tokPub2, listingBody("eu", 7, "public"))
	h.expect(req{method: "POST", path: "/v1/listings/" + own.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "ts1"}}, 201, "")
	h.visible(tokOtherPub, listingBody("eu", 7, "public"))
	other := engine.Tenant{Game: "other", Env: "dev"}

	// A tenant operator reads its own tenant, named or not.
	wantTenantStats(t, h.expect(tenantStats(tokOp, ""), 200, ""), testTenant, l, [3]int{2, 1, 3})
	wantTenantStats(t, h.expect(tenantStats(tokOp, "game_id=demo&environment_id=dev"), 200, ""), testTenant, l, [3]int{2, 1, 3})
	wantTenantStats(t, h.expect(tenantStats(tokOtherOp, ""), 200, ""), other, l, [3]int{1, 0, 1})
	// A global operator names any tenant; one with nothing live is all zero.
	wantTenantStats(t, h.expect(tenantStats(tokGlobalOp, "game_id=other&environment_id=dev"), 200, ""), other, l, [3]int{1, 0, 1})
	wantTenantStats(t, h.expect(tenantStats(tokGlobalOp, "environment_id=dev&game_id=demo"), 200, ""), testTenant, l, [3]int{2, 1, 3})
	wantTenantStats(t, h.expect(tenantStats(tokGlobalOp, "game_id=empty&environment_id=dev"), 200, ""),
		engine.Tenant{Game: "empty", Env: "dev"}, l, [3]int{})

	// Rejections, each changing nothing.
	h.rejected(tenantStats(tokOp, "game_id=other&environment_id=dev"), 403, "forbidden") // another tenant
	h.rejected(tenantStats(tokPub, ""), 403, "forbidden")
	h.rejected(tenantStats(tokCli, ""), 403, "forbidden")
	h.rejected(tenantStats("", ""), 401, "unauthorized")
	for _, q := range []string{"", "game_id=demo", "environment_id=dev", "game_id=Demo&environment_id=dev",
		"game_id=demo&environment_id=dev&game_id=demo", "game_id=demo&environment_id=dev&x=1"} {
		h.rejected(tenantStats(tokGlobalOp, q), 400, "invalid_request")
	}
	h.rejected(tenantStats(tokOp, "region=eu"), 400, "invalid_request")
	h.rejected(req{method: "POST", path: "/v1/admin/tenant-stats", token: tokOp}, 405, "method_not_allowed")
}

// A tenant operator's principal revocation is confined to its tenant: the
// subject's records elsewhere stay, and it is not revoked elsewhere.
func TestAdminRevokePrincipalIsConfinedToTheOperatorsTenant(t *testing.T) {
	h := newHarness(t, testLimits())
	here := h.visible(tokPub, listingBody("eu", 7, "public"))
	// pub-1 also owns a listing in tenant other/dev (as it would after its
	// principal moved tenants); only the store knows it.
	other := engine.Tenant{Game: "other", Env: "dev"}
	there, r, err := h.store.CreateListing(context.Background(), engine.CreateListing{
		Tenant: other, Owner: "pub-1", IdempotencyKey: "elsewhere",
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 7, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8},
		Doc: []byte("{}"),
	})
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r, err)
	}
	res := h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"pub-1","ttl_s":60}`}, 200, "")
	if res.num("removed") != 1 {
		t.Fatalf("removed %s, want 1 (the listing in the operator's tenant)", res.body)
	}
	h.rejected(req{method: "GET", path: "/v1/listings/" + here.id, token: tokCli}, 404, "not_found")
	if _, r, _ := h.store.GetListing(context.Background(), engine.GetListing{Tenant: other, Listing: there.ID}); !r.OK() {
		t.Fatalf("the listing in another tenant was removed: %v", r.Outcome)
	}
	if g, _ := h.store.Revoked(context.Background(), "pub-1"); g {
		t.Fatal("a tenant operator's revocation is global")
	}
	if o, _ := h.store.RevokedInTenant(context.Background(), other, "pub-1"); o {
		t.Fatal("a tenant operator's revocation reaches another tenant")
	}
	// In its tenant the subject is revoked: every request is 403 revoked.
	h.rejected(req{method: "GET", path: "/v1/whoami", token: tokPub}, 403, "revoked")
	h.rejected(req{method: "POST", path: "/v1/listings", token: tokPub, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "after-revoke"}}, 403, "revoked")
	// It uses one slot of the shared pool; a global operator's revocation of
	// the same subject reaches everywhere.
	res = h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"pub-1","ttl_s":60}`}, 200, "")
	if res.num("removed") != 1 {
		t.Fatalf("global revocation removed %s, want 1 (the listing in other/dev)", res.body)
	}
	if st := h.store.Stats(); st.Pools[engine.PoolRevocations-1].Used != 2 {
		t.Fatalf("revocations used %d, want 2", st.Pools[engine.PoolRevocations-1].Used)
	}
	h.clock.Advance(time.Minute)
	h.expect(req{method: "GET", path: "/v1/whoami", token: tokPub}, 200, "")
}

// A tenant operator revokes listings of its own tenant only.
func TestAdminRevokeListingOfAnotherTenantIsNotFound(t *testing.T) {
	h := newHarness(t, testLimits())
	mine := h.visible(tokOtherPub, listingBody("eu", 7, "public"))
	theirs := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.rejected(req{method: "DELETE", path: "/v1/admin/listings/" + theirs.id, token: tokOtherOp}, 404, "not_found")
	h.expect(req{method: "DELETE", path: "/v1/admin/listings/" + mine.id, token: tokOtherOp}, 204, "")
	h.expect(req{method: "GET", path: "/v1/listings/" + theirs.id, token: tokCli}, 200, "")
}
