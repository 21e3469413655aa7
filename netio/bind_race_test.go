package netio

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// afterAttemptHost is a store whose AttemptHost runs a hook once, after
// the real AttemptHost answered: the moment between the mediator deriving
// an h: key and committing the bind, where a racing deletion lands.
type afterAttemptHost struct {
	engine.Store
	hook atomic.Pointer[func()]
}

func (s *afterAttemptHost) AttemptHost(h engine.Handle) (engine.Handle, bool) {
	ph, ok := s.Store.AttemptHost(h)
	if fn := s.hook.Swap(nil); fn != nil {
		(*fn)()
	}
	return ph, ok
}

// raceMediator starts a mediator on f's store wrapped in afterAttemptHost
// and points f's peers at it.
func raceMediator(t *testing.T, f *fixture) *afterAttemptHost {
	t.Helper()
	st := &afterAttemptHost{Store: f.store}
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, st, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	f.addr = m.LocalAddrs()[0]
	return st
}

// A host bind whose attempt is removed after its key was derived but before
// the commit gets the answer a request arriving after the removal gets
// (unsigned 401), never a signed 404, which fits no single instant.
func TestHostBindRacingRemovalIsUnauthorized(t *testing.T) {
	removals := []struct {
		name   string
		remove func(f *fixture, v engine.ListingView)
	}{
		{"ListingRevoked", func(f *fixture, v engine.ListingView) {
			r, err := f.store.RevokeListing(t.Context(), engine.RevokeListing{AnyTenant: true, Listing: v.ID})
			if err != nil || !r.OK() {
				t.Errorf("RevokeListing: %v %v", r, err)
			}
		}},
		{"StoreUnavailable", func(f *fixture, _ engine.ListingView) { f.store.MarkUnavailable() }},
	}
	for _, rm := range removals {
		t.Run(rm.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			st := raceMediator(t, f)
			v, pc := f.listing()
			host := f.peer()
			wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], host.addr())
			a := f.attempt(v)
			hc := hostCap(v.Presence, a.Handle)
			hook := func() { rm.remove(f, v) }
			st.hook.Store(&hook)
			wantError(t, host.roundTrip(signedReq('h', a.Handle, hc[:])), stun.CodeUnauthorized, nil)
			if st.hook.Load() != nil {
				t.Fatal("the bind never read AttemptHost: the race was not exercised")
			}
			// The same request now, with the removal long done: the same answer.
			wantError(t, host.roundTrip(signedReq('h', a.Handle, hc[:])), stun.CodeUnauthorized, nil)
		})
	}

	// Control: without a racing removal the same path binds.
	f := newFixture(t, Config{})
	raceMediator(t, f)
	v, pc := f.listing()
	host := f.peer()
	wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], host.addr())
	a := f.attempt(v)
	hc := hostCap(v.Presence, a.Handle)
	wantSuccess(t, host.roundTrip(signedReq('h', a.Handle, hc[:])), hc[:], host.addr())
}
