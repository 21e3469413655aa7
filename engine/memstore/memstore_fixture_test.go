package engine

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"
)

// fx is a store on a manual clock with helpers that compute capabilities the
// way clients do.
type fx struct {
	t     *testing.T
	s     *MemStore
	clock *ManualClock
	k     *Keyring
	ctx   context.Context
	seq   int
	seq2  sync.Mutex
}

var fxTenant = Tenant{Game: "space-game", Env: "test"}

func newFx(t *testing.T, edit func(*Limits)) *fx {
	t.Helper()
	l := DefaultLimits()
	if edit != nil {
		edit(&l)
	}
	c := NewManualClock()
	k := NewKeyring([32]byte{1, 2, 3})
	s, err := NewMemStore(l, c, k)
	if err != nil {
		t.Fatalf("NewMemStore: %v", err)
	}
	return &fx{t: t, s: s, clock: c, k: k, ctx: context.Background()}
}

func fxPub(port uint16) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("203.0.113.10"), port)
}

func fxSpec() ListingSpec {
	return ListingSpec{Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Test host",
		Visibility: Public, TrustMode: ManagedDedicated, CurrentPlayers: 1, MaxPlayers: 8,
		Metadata: []MetaEntry{{Key: "mode", Value: "coop"}}}
}

func (f *fx) check() {
	f.t.Helper()
	if err := f.s.CheckInvariants(); err != nil {
		f.t.Fatalf("invariants: %v", err)
	}
}

func (f *fx) listingCmd(owner Subject) CreateListing {
	f.seq++
	return CreateListing{Tenant: fxTenant, Owner: owner, IdempotencyKey: fmt.Sprintf("k-%d", f.seq), Spec: fxSpec()}
}

func (f *fx) create(cmd CreateListing) ListingView {
	f.t.Helper()
	v, r, err := f.s.CreateListing(f.ctx, cmd)
	if err != nil || r.Outcome != Success {
		f.t.Fatalf("CreateListing = %v, %v", r, err)
	}
	f.check()
	return v
}

func (f *fx) presenceKey(h Handle) Fingerprint { c := f.k.Presence(h); return FingerprintOf(&c) }
func (f *fx) leaseKey(l LeaseID) Fingerprint   { c := f.k.Lease(l); return FingerprintOf(&c) }
func (f *fx) clientKey(h Handle) Fingerprint   { c := f.k.AttemptClient(h); return FingerprintOf(&c) }
func (f *fx) hostKey(p, h Handle) Fingerprint {
	pc := f.k.Presence(p)
	c := HostAttemptCapability(&pc, h)
	return FingerprintOf(&c)
}

func (f *fx) presence(v ListingView, seq uint64) PresenceView {
	f.t.Helper()
	pv, r, err := f.s.BindHostPresence(f.ctx, BindPresence{Handle: v.Presence, Key: f.presenceKey(v.Presence), Seq: seq, Public: fxPub(40000)})
	if err != nil || r.Outcome != Success {
		f.t.Fatalf("BindHostPresence = %v, %v", r, err)
	}
	f.check()
	return pv
}

func (f *fx) visible(owner Subject) ListingView {
	f.t.Helper()
	v := f.create(f.listingCmd(owner))
	f.presence(v, 1)
	return v
}

func (f *fx) attempt(v ListingView, client Subject) AttemptView {
	f.t.Helper()
	f.seq++
	a, r, err := f.s.CreateJoinAttempt(f.ctx, CreateAttempt{Tenant: v.Tenant, Client: client,
		IdempotencyKey: fmt.Sprintf("j-%d", f.seq), Listing: v.ID, ProtocolVersion: 7})
	if err != nil || r.Outcome != Success {
		f.t.Fatalf("CreateJoinAttempt = %v, %v", r, err)
	}
	f.check()
	return a
}

func (f *fx) bindCmd(a AttemptView, role Role, port uint16) BindAttempt {
	key := f.clientKey(a.Handle)
	if role == RoleHost {
		key = f.hostKey(a.HostPresence, a.Handle)
	}
	return BindAttempt{Handle: a.Handle, Role: role, Key: key, Public: fxPub(port)}
}

func (f *fx) advance(d time.Duration) {
	f.clock.Advance(d)
	f.check()
}
