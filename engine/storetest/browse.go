package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runBrowse checks filtering, ID order, After and more.
func runBrowse(t *testing.T, f Factory) {
	t.Run("FilterOrderAndPages", func(t *testing.T) {
		e := newEnv(t, f)
		var want []engine.ListingID
		for i := 0; i < 7; i++ {
			want = append(want, e.visible(engine.Subject(fmt.Sprintf("publisher-%d", i))).ID)
		}
		// Noise that must never be listed.
		noise := []func(*engine.CreateListing){
			func(c *engine.CreateListing) { c.Spec.Visibility = engine.Unlisted },
			func(c *engine.CreateListing) { c.Spec.ProtocolVersion = 8 },
			func(c *engine.CreateListing) { c.Tenant = otherTenant },
			func(c *engine.CreateListing) { c.Spec.Region = "us-east" },
		}
		for _, mod := range noise {
			c := e.listingCmd("publisher-n")
			mod(&c)
			n := e.create(c)
			e.presence(n, 1, pub(1))
		}
		e.create(e.listingCmd("publisher-n")) // no presence
		expired := e.visible("publisher-e")
		r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(expired))
		e.want("DeleteListing", r, err, engine.Success)
		slices.SortFunc(want, func(a, b engine.ListingID) int { return a.Compare(b.UUID) })

		q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Region: "eu-central", Limit: 3}
		var got []engine.ListingID
		for page := 0; ; page++ {
			if page > 5 {
				t.Fatalf("browse does not terminate")
			}
			items, more, r, err := e.s.BrowseVisible(e.ctx, q, nil)
			e.want("BrowseVisible", r, err, engine.Success)
			for _, it := range items {
				got = append(got, it.ID)
				if !it.PresenceFresh || it.HostPublic != pub(40000) || it.Spec == nil || it.Spec.Visibility != engine.Public {
					t.Fatalf("browse item not a fresh public listing")
				}
			}
			wantMore := len(got) < len(want)
			if more != wantMore {
				t.Fatalf("page %d: more = %v, want %v", page, more, wantMore)
			}
			if !more {
				break
			}
			if len(items) != q.Limit {
				t.Fatalf("page %d has %d items, more=true, limit %d", page, len(items), q.Limit)
			}
			q.After, q.HasAfter = items[len(items)-1].ID, true
		}
		if !slices.Equal(got, want) {
			t.Fatalf("browse returned %d IDs %v, want %d in ascending order", len(got), got, len(want))
		}
		// Any region; a page that fits exactly has more=false.
		q = engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 7}
		items, more, _, _ := e.s.BrowseVisible(e.ctx, q, nil)
		if len(items) != 7 || !more {
			t.Fatalf("any-region browse: %d items more=%v, want 7 and true", len(items), more)
		}
		for _, lim := range []int{8, 9} {
			q.Limit = lim
			items, more, _, _ = e.s.BrowseVisible(e.ctx, q, nil)
			if len(items) != 8 || more {
				t.Fatalf("browse of all 8 with limit %d: %d items more=%v, want 8 and false", lim, len(items), more)
			}
		}
		// After an ID that is not stored: the listings strictly after it.
		q = engine.Browse{Tenant: tenant, ProtocolVersion: 7, Region: "eu-central", Limit: 100,
			After: engine.ListingID{UUID: mid(want[2].UUID, want[3].UUID)}, HasAfter: true}
		items, more, _, _ = e.s.BrowseVisible(e.ctx, q, nil)
		if len(items) != 4 || items[0].ID != want[3] || more {
			t.Fatalf("browse after an unknown ID: %d items more=%v", len(items), more)
		}
		// After the last: empty.
		q.After = want[6]
		items, more, _, _ = e.s.BrowseVisible(e.ctx, q, nil)
		if len(items) != 0 || more {
			t.Fatalf("browse after the last: %d items more=%v", len(items), more)
		}
		// dst is appended to.
		sentinel := engine.ListingView{Owner: "sentinel"}
		q = engine.Browse{Tenant: tenant, ProtocolVersion: 7, Region: "eu-central", Limit: 2}
		items, _, _, _ = e.s.BrowseVisible(e.ctx, q, []engine.ListingView{sentinel})
		if len(items) != 3 || items[0].Owner != "sentinel" || items[1].ID != want[0] {
			t.Fatalf("BrowseVisible does not append to dst")
		}
		// Presence expiry hides everything.
		e.c.Advance(e.l.PresenceTTL)
		items, more, _, _ = e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 100}, nil)
		if len(items) != 0 || more {
			t.Fatalf("browse after presence expiry: %d items", len(items))
		}
	})

	t.Run("PageCeiling", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.OwnerListingQuota = 1000 })
		for i := 0; i < engine.BrowsePageMax+1; i++ {
			e.visible("publisher-1")
		}
		items, more, r, err := e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: engine.BrowsePageMax}, nil)
		e.want("BrowseVisible", r, err, engine.Success)
		if len(items) != engine.BrowsePageMax || !more {
			t.Fatalf("full page: %d items more=%v", len(items), more)
		}
		for i := 1; i < len(items); i++ {
			if items[i-1].ID.Compare(items[i].ID.UUID) >= 0 {
				t.Fatalf("browse not in ascending ID order at %d", i)
			}
		}
	})
}

// mid returns a UUID strictly between a and b when one exists (a < b): a+1
// in big-endian arithmetic, or a itself when a+1 == b (then "after a" is what
// the test means anyway, since a is stored and excluded).
func mid(a, b engine.UUID) engine.UUID {
	m := a
	for i := len(m) - 1; i >= 0; i-- {
		m[i]++
		if m[i] != 0 {
			break
		}
	}
	if m == b {
		return a
	}
	return m
}
