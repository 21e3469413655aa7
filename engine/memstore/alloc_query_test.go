package memstore

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Zero allocations on a filtered, ordered browse page (first and
// continuation) and on a renewal that moves the listing's keys and sets
// the attributes it already has.

func TestAllocsFilteredBrowse(t *testing.T) {
	f := newFx(t, nil)
	for i := range 60 {
		cmd := f.listingCmd("pub")
		cmd.Spec.CurrentPlayers = i % 9
		cmd.Spec.Attributes = engine.Attributes{{Name: "level", Num: int64(i % 5), IsNum: true}, {Name: "mode", Str: []string{"coop", "pvp"}[i%2]}}
		f.presence(f.create(cmd), 1)
	}
	items := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
	views := make([]engine.ListingView, 0, engine.BrowsePageMax)
	for _, q := range []engine.Browse{
		{Filter: engine.BrowseFilter{MinFreeSlots: 1, Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}}},
		{Order: engine.OrderFreeSlots, Desc: true, Filter: engine.BrowseFilter{MinFreeSlots: 1}},
		{Order: engine.OrderCurrentPlayers, Filter: engine.BrowseFilter{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: 1}}}},
		{Order: engine.OrderCreated, Desc: true, Filter: engine.BrowseFilter{MinPlayers: 1, MaxPlayers: 6, HasMaxPlayers: true}},
	} {
		q.Tenant, q.ProtocolVersion, q.Limit = fxTenant, 7, 5
		first, next, _, _ := f.s.BrowseItems(f.ctx, q, nil)
		if len(first) != 5 || !next.More {
			t.Fatalf("query %+v: first page %d items, more %v", q, len(first), next.More)
		}
		cont := q
		cont.HasAfter, cont.After, cont.AfterKey, cont.Since = true, next.After, next.AfterKey, next.Since
		for _, p := range []engine.Browse{q, cont} {
			wantNoAllocs(t, "BrowseItems "+p.Order.String(), 100, func() {
				got, next, r, err := f.s.BrowseItems(f.ctx, p, items[:0])
				if err != nil || r.Outcome != engine.Success || len(got) != 5 || !next.More {
					t.Fatalf("browse items = %d %v %v %v", len(got), next.More, r, err)
				}
			})
			wantNoAllocs(t, "BrowseVisible "+p.Order.String(), 100, func() {
				got, more, r, err := f.s.BrowseVisible(f.ctx, p, views[:0])
				if err != nil || r.Outcome != engine.Success || len(got) != 5 || !more {
					t.Fatalf("browse = %d %v %v %v", len(got), more, r, err)
				}
			})
		}
	}
}

func TestAllocsRenewAttributes(t *testing.T) {
	f := newFx(t, nil)
	for range 10 { // neighbours in every set
		f.visible("pub-2")
	}
	cmd := f.listingCmd("pub-1")
	cmd.Spec.Attributes = engine.Attributes{{Name: "level", Num: 3, IsNum: true}, {Name: "mode", Str: "coop"}}
	v := f.create(cmd)
	f.presence(v, 1)
	rc := engine.RenewLease{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease), ExpectedVersion: 1,
		SetAttributes: true, Attributes: engine.Attributes{{Name: "level", Num: 3, IsNum: true}, {Name: "mode", Str: "coop"}}}
	players := 0
	wantNoAllocs(t, "RenewLease with attributes", 100, func() {
		players = 5 - players // moves the listing in the free slots and players sets
		rc.CurrentPlayers = players
		nv, r, err := f.s.RenewLease(f.ctx, rc)
		if err != nil || r.Outcome != engine.Success || nv.CurrentPlayers != players {
			t.Fatalf("renew = %v %v", r, err)
		}
		rc.ExpectedVersion = nv.Version
	})
	f.check()
}
