package netio

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

func TestDrainAndUnavailable(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	host := f.peer()
	wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], host.addr())
	a := f.attempt(v)
	if err := f.store.BeginDrain(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Presence refreshes and binds of existing attempts go on while draining.
	wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(2))), pc[:], host.addr())
	cc := clientCap(a.Handle)
	wantSuccess(t, host.roundTrip(signedReq('c', a.Handle, cc[:])), cc[:], host.addr())
	// After the drain window every handle is gone: signed 404.
	f.clock.Advance(engine.DefaultDrainWindow)
	wantError(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(3))), 404, pc[:])
	wantError(t, host.roundTrip(signedReq('c', a.Handle, cc[:])), 404, cc[:])

	g := newFixture(t, Config{})
	w, wc := g.listing()
	p := g.peer()
	g.store.MarkUnavailable()
	wantError(t, p.roundTrip(signedReq('p', w.Presence, wc[:], seq(1))), 503, wc[:])
	// Plain Binding never depends on the store.
	wantSuccess(t, p.roundTrip(plainBinding(t)), nil, p.addr())
}

func TestPresencePoolFull(t *testing.T) {
	f := newFixture(t, Config{})
	lim := engine.DefaultLimits()
	lim.MaxPresence = 1
	st, err := memstore.New(lim, f.clock, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	f.mediatorOn(st)
	v1, c1 := f.listing()
	v2, c2 := f.listing()
	p := f.peer()
	wantSuccess(t, p.roundTrip(signedReq('p', v1.Presence, c1[:], seq(1))), c1[:], p.addr())
	before := st.Snapshot()
	wantError(t, p.roundTrip(signedReq('p', v2.Presence, c2[:], seq(1))), 508, c2[:])
	if st.Snapshot() != before {
		t.Fatal("a shed refresh changed the store")
	}
}

func TestErrorMapping(t *testing.T) {
	f := func(o engine.Outcome, code int) {
		t.Helper()
		if got, _ := errorFor(o); got != code {
			t.Fatalf("%v → %d, want %d", o, got, code)
		}
	}
	f(engine.NotFound, 404)
	f(engine.Expired, 404)
	f(engine.Revoked, 403)
	f(engine.Conflict, 409)
	f(engine.ReplayRejected, 409)
	f(engine.CapacityExceeded, 508)
	f(engine.Draining, 503)
	f(engine.ServiceUnavailable, 503)
}
