package memstore

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// fx is a store on a manual clock with helpers that compute capabilities the
// way clients do.
type fx struct {
	t     *testing.T
	s     *Store
	clock *engine.ManualClock
	k     *engine.Keyring
	keys  storetest.Keys // the capability fingerprints clients compute
	ctx   context.Context
	seq   int
	seq2  sync.Mutex
}

var fxTenant = engine.Tenant{Game: "space-game", Env: "test"}

func newFx(t *testing.T, edit func(*engine.Limits)) *fx {
	t.Helper()
	l := engine.DefaultLimits()
	if edit != nil {
		edit(&l)
	}
	c := engine.NewManualClock()
	k := engine.NewKeyring([32]byte{1, 2, 3})
	s, err := New(l, c, k)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &fx{t: t, s: s, clock: c, k: k, keys: storetest.Keys{Ring: k}, ctx: context.Background()}
}

func fxPub(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("203.0.113.10"), port)
}

func (f *fx) check() {
	f.t.Helper()
	if err := f.s.CheckInvariants(); err != nil {
		f.t.Fatalf("invariants: %v", err)
	}
}

func (f *fx) listingCmd(owner engine.Subject) engine.CreateListing {
	f.seq++
	return engine.CreateListing{Tenant: fxTenant, Owner: owner, IdempotencyKey: fmt.Sprintf("k-%d", f.seq), Spec: storetest.Spec()}
}

func (f *fx) create(cmd engine.CreateListing) engine.ListingView {
	f.t.Helper()
	v, r, err := f.s.CreateListing(f.ctx, cmd)
	if err != nil || r.Outcome != engine.Success {
		f.t.Fatalf("CreateListing = %v, %v", r, err)
	}
	f.check()
	return v
}

func (f *fx) presence(v engine.ListingView, seq uint64) engine.PresenceView {
	f.t.Helper()
	pv, r, err := f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: seq, Public: fxPub(40000)})
	if err != nil || r.Outcome != engine.Success {
		f.t.Fatalf("BindHostPresence = %v, %v", r, err)
	}
	f.check()
	return pv
}

func (f *fx) visible(owner engine.Subject) engine.ListingView {
	f.t.Helper()
	v := f.create(f.listingCmd(owner))
	f.presence(v, 1)
	return v
}

func (f *fx) attempt(v engine.ListingView, client engine.Subject) engine.AttemptView {
	f.t.Helper()
	f.seq++
	a, r, err := f.s.CreateJoinAttempt(f.ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: client,
		IdempotencyKey: fmt.Sprintf("j-%d", f.seq), Listing: v.ID, ProtocolVersion: 7})
	if err != nil || r.Outcome != engine.Success {
		f.t.Fatalf("CreateJoinAttempt = %v, %v", r, err)
	}
	f.check()
	return a
}

func (f *fx) bindCmd(a engine.AttemptView, role engine.Role, port uint16) engine.BindAttempt {
	return f.keys.Bind(a, role, fxPub(port), netip.AddrPort{})
}

func (f *fx) advance(d time.Duration) {
	f.clock.Advance(d)
	f.check()
}
