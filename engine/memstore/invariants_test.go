package memstore

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckInvariants must notice each kind of corruption.
func TestCheckInvariantsDetectsCorruption(t *testing.T) {
	f := func(name string, corrupt func(s *Store, li, ai int32)) {
		t.Helper()
		x := newFx(t, nil)
		v := x.visible("pub-1")
		x.attempt(v, "c")
		x.attempt(v, "c")
		li, _ := x.s.listingByID.get(v.ID.UUID)
		ai := x.s.byListing.first(&x.s.listings.at(li).attempts)
		corrupt(x.s, li, ai)
		if err := x.s.CheckInvariants(); err == nil {
			t.Fatalf("%s: not detected", name)
		}
	}
	f("id map", func(s *Store, li, ai int32) { s.listingByID.del(s.listings.at(li).id.UUID) })
	f("handle map", func(s *Store, li, ai int32) { s.attemptByHandle.put(engine.NewUUID(), ai) })
	f("presence count", func(s *Store, li, ai int32) { s.nPresence++ })
	f("in flight", func(s *Store, li, ai int32) { s.inFlight-- })
	f("browse index", func(s *Store, li, ai int32) {
		s.browse.at(s.listings.at(li).browseAll).scope.open.delete(setPos{id: s.listings.at(li).id.UUID})
	})
	f("pending list", func(s *Store, li, ai int32) { s.pending.remove(&s.listings.at(li).pending, ai) })
	f("owner list", func(s *Store, li, ai int32) {
		s.byOwner.remove(&s.subjects.at(s.listings.at(li).owner).listings, li)
	})
	f("tenant count", func(s *Store, li, ai int32) { s.tenants.at(s.listings.at(li).tenant).counts.attempts++ })
	f("tenant listing count", func(s *Store, li, ai int32) { s.tenants.at(s.listings.at(li).tenant).counts.listings-- })
	f("tenant idempotency count", func(s *Store, li, ai int32) { s.tenants.at(s.listings.at(li).tenant).counts.idem++ })
	f("tenant revocation unscheduled", func(s *Store, li, ai int32) {
		k := s.tenantRevKey(engine.Tenant{Game: "g", Env: "e"}, "x")
		i := s.tenantRevs.alloc()
		s.tenantRevs.at(i).hash, s.tenantRevs.at(i).tenant, s.tenantRevs.at(i).subject = k.hash, k.tenant, k.subject
		chainInsert(&s.tenantRevIdx, &s.tenantRevs, i)
	})
	f("idempotency record of a listing", func(s *Store, li, ai int32) {
		s.idemExp.refresh(s.listingIdem[li], s.leaseExp.deadline(li)) // lost its margin past the lease
	})
	f("schedule order", func(s *Store, li, ai int32) { s.attemptExp.nd[ai].dl = 1 << 50 }) // the first attempt now expires after the second
	// A live listing off its lease schedule would never expire (cleanup
	// cannot find it); it must be caught before cleanup runs.
	f("lease unscheduled", func(s *Store, li, ai int32) { s.leaseExp.remove(li) })
	f("uuid index cell", func(s *Store, li, ai int32) {
		// Move the listing's presence handle one cell back: the count is
		// right but a key may sit before its home (or be unreachable).
		x := &s.listingByPresence
		u := s.listings.at(li).presence.UUID
		k := x.home(&u)
		for x.tab[k].key != u {
			k = (k + 1) & (len(x.tab) - 1)
		}
		prev := (k - 1) & (len(x.tab) - 1)
		x.tab[k], x.tab[prev] = x.tab[prev], x.tab[k]
	})
	f("free list", func(s *Store, li, ai int32) { s.attempts.free = append(s.attempts.free, ai) })
	f("binding", func(s *Store, li, ai int32) { s.attempts.at(ai).consumed = true; s.inFlight-- })
}
