package redisstore

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// The registry as last renewed routes to an instance only until its lease
// may have expired, so a dead instance leaves the routing at its lease
// deadline rather than at this instance's next renewal; a draining one
// gets nothing new.
func TestRoutingSkipsInstancesPastTheirLease(t *testing.T) {
	s := &Store{tick: time.Microsecond}
	s.reg.lease, s.reg.addr = time.Second, "127.0.0.1:4001"
	self, other := engine.NewUUID(), engine.NewUUID()
	now := time.Now()
	live := []Instance{
		{ID: self.String(), Addr: "127.0.0.1:4001", uuid: self, until: now.Add(time.Hour)},
		{ID: other.String(), Addr: "127.0.0.1:4002", uuid: other, until: now.Add(time.Hour)},
	}
	s.reg.live.Store(&live)
	id := engine.ListingID{UUID: engine.NewUUID()}
	if got := s.ListingMediator(other, id); got != "127.0.0.1:4002" {
		t.Fatalf("presence on a live instance: %s, want its mediator", got)
	}
	live[1].until = now.Add(-time.Millisecond)
	if got := s.ListingMediator(other, id); got != "127.0.0.1:4001" {
		t.Fatalf("presence on an instance past its lease: %s, want the only live one", got)
	}
	for range 50 {
		if got := s.NewListingMediator(engine.ListingID{UUID: engine.NewUUID()}); got != "127.0.0.1:4001" {
			t.Fatalf("a new listing routed to %s, past its lease", got)
		}
	}
	live[1].until, live[1].Draining = now.Add(time.Hour), true
	if got := s.ListingMediator(other, id); got != "127.0.0.1:4001" {
		t.Fatalf("presence on a draining instance: %s, want the other one", got)
	}
	if got := s.ListingMediator(engine.UUID{}, id); got != "127.0.0.1:4001" {
		t.Fatalf("no presence yet: %s, want the HRW choice", got)
	}
}
