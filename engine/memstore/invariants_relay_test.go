package memstore

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckInvariants must notice corruption of the relay state: an attempt's
// relay fields and the tombstones.
func TestCheckInvariantsDetectsRelayCorruption(t *testing.T) {
	relay := packEndpoint(netip.MustParseAddrPort("192.0.2.50:5000"))
	f := func(name string, corrupt func(s *Store, ai, ti int32)) {
		t.Helper()
		x := newFx(t, nil)
		v := x.visible("pub-1")
		x.attempt(v, "c")
		x.advance(x.s.lim.AttemptTTL) // leaves a tombstone
		x.presence(v, 2)
		x.attempt(v, "c")
		li, _ := x.s.listingByID.get(v.ID.UUID)
		ai := x.s.byListing.first(&x.s.listings.at(li).attempts)
		ti := x.s.tombExp.head - 1
		if ai < 0 || ti < 0 {
			t.Fatalf("%s: fixture has no attempt or tombstone", name)
		}
		if err := x.s.CheckInvariants(); err != nil {
			t.Fatalf("%s: fixture broken: %v", name, err)
		}
		corrupt(x.s, ai, ti)
		if err := x.s.CheckInvariants(); err == nil {
			t.Fatalf("%s: not detected", name)
		}
	}
	f("relayed address on an unbound side", func(s *Store, ai, ti int32) { s.attempts.at(ai).peerRelay = relay })
	f("relay introduction without addresses", func(s *Store, ai, ti int32) {
		s.attempts.at(ai).relayConsumed = true
		s.inFlight--
	})
	f("introduction of a relay-only attempt", func(s *Store, ai, ti int32) {
		a := s.attempts.at(ai)
		a.host, a.peer = packBinding(fxPub(1), netip.AddrPort{}), packBinding(fxPub(2), netip.AddrPort{})
		s.pending.remove(&s.listings.at(a.listing).pending, ai)
		a.relayOnly, a.consumed = true, true
		s.inFlight--
	})
	f("outcome path", func(s *Store, ai, ti int32) { s.attempts.at(ai).hostOut.Path = engine.PathFailed + 1 })
	f("tombstone of a live attempt", func(s *Store, ai, ti int32) { s.tombs.at(ti).id = s.attempts.at(ai).id })
	f("tombstone index", func(s *Store, ai, ti int32) { s.tombByID.del(s.tombs.at(ti).id.UUID) })
	f("tombstone unscheduled", func(s *Store, ai, ti int32) { s.tombExp.remove(ti) })
	f("tombstone end", func(s *Store, ai, ti int32) { s.tombs.at(ti).end = 0 })
}
