package httpapi

import (
	"slices"
	"strings"
	"testing"
)

func TestBrowse(t *testing.T) {
	l := testLimits()
	l.MaxListings, l.OwnerListingQuota, l.TenantListingQuota = 20, 20, 20
	h := newHarness(t, l)
	var ids []string
	for i := range 7 {
		region := "eu"
		if i%2 == 1 {
			region = "us"
		}
		ids = append(ids, h.visible(tokPub, listingBody(region, 7, "public")).id)
	}
	slices.Sort(ids)
	h.visible(tokPub, listingBody("eu", 7, "unlisted"))    // not browsable
	h.create(tokPub, listingBody("eu", 7, "public"))       // no presence
	h.visible(tokPub, listingBody("eu", 8, "public"))      // other protocol
	h.visible(tokOtherPub, listingBody("eu", 7, "public")) // other tenant

	browse := func(token, query string) *response {
		t.Helper()
		return h.expect(req{method: "GET", path: "/v1/listings?" + query, token: token}, 200, "")
	}
	page := func(r *response) (got []string, next string) {
		t.Helper()
		for _, it := range r.json["items"].([]any) {
			m := it.(map[string]any)
			if len(m) != 10 {
				t.Fatalf("item has %d members: %v", len(m), m)
			}
			for _, k := range []string{"listing_id", "region", "protocol_version", "build_version", "display_name",
				"trust_mode", "current_players", "max_players", "metadata", "lease_expires_at"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("item lacks %s: %v", k, m)
				}
			}
			got = append(got, m["listing_id"].(string))
		}
		if n, ok := r.json["next_after"].(string); ok {
			next = n
		} else if r.json["next_after"] != nil {
			t.Fatalf("next_after %v", r.json["next_after"])
		}
		return got, next
	}
	r := browse(tokCli, "protocol_version=7")
	got, next := page(r)
	if !slices.Equal(got, ids) || next != "" {
		t.Fatalf("browse all = %v next %q, want %v", got, next, ids)
	}
	for _, secret := range []string{"pub-1", "198.51.100.7", `"token"`, `"lease"`, `"handle"`, `"presence"`, `"lease_id"`} {
		if strings.Contains(string(r.body), secret) {
			t.Fatalf("browse reveals %q: %s", secret, r.body)
		}
	}
	// Paging with after and limit; next_after is null exactly on the last page.
	var all []string
	after := ""
	for range 10 {
		q := "protocol_version=7&limit=3"
		if after != "" {
			q += "&after=" + strings.ToUpper(after)
		}
		got, next := page(browse(tokPub, q))
		all = append(all, got...)
		if next == "" {
			break
		}
		if next != got[len(got)-1] {
			t.Fatalf("next_after %s is not the last item %s", next, got[len(got)-1])
		}
		after = next
	}
	if !slices.Equal(all, ids) {
		t.Fatalf("paged = %v, want %v", all, ids)
	}
	got, next = page(browse(tokCli, "protocol_version=7&limit=7"))
	if len(got) != 7 || next != "" {
		t.Fatalf("exact page: %d items, next %q", len(got), next)
	}
	got, next = page(browse(tokCli, "protocol_version=7&limit=6"))
	if len(got) != 6 || next != got[5] {
		t.Fatalf("short page: %d items, next %q", len(got), next)
	}
	got, _ = page(browse(tokCli, "region=us&protocol_version=7"))
	if len(got) != 3 {
		t.Fatalf("region filter: %v", got)
	}
	got, _ = page(browse(tokCli, "protocol_version=7&region=ap"))
	if len(got) != 0 {
		t.Fatalf("unknown region: %v", got)
	}
	got, _ = page(browse(tokOtherCli, "protocol_version=7"))
	if len(got) != 1 {
		t.Fatalf("other tenant sees %v", got)
	}
	got, next = page(browse(tokCli, "protocol_version=7&after="+ids[6]))
	if len(got) != 0 || next != "" {
		t.Fatalf("after the last: %v %q", got, next)
	}

	bad := func(query string) {
		t.Helper()
		h.rejected(req{method: "GET", path: "/v1/listings?" + query, token: tokCli}, 400, "invalid_request")
	}
	bad("")
	bad("region=eu")
	bad("protocol_version=0")
	bad("protocol_version=4294967296")
	bad("protocol_version=7.0")
	bad("protocol_version=07")
	bad("protocol_version=-7")
	bad("protocol_version=7&protocol_version=8")
	bad("protocol_version=7&limit=0")
	bad("protocol_version=7&limit=101")
	bad("protocol_version=7&limit=x")
	bad("protocol_version=7&after=nope")
	bad("protocol_version=7&after=" + ids[0] + "0")
	bad("protocol_version=7&region=EU")
	bad("protocol_version=7&region=")
	bad("protocol_version=7&colour=red")
	h.rejected(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokOp}, 403, "forbidden")
	h.rejected(req{method: "GET", path: "/v1/listings?protocol_version=7", token: tokGlobalOp}, 403, "forbidden")
}
