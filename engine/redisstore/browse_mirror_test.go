package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// mirrorFixture is one deployment with two instances, a and b, on a
// shared manual clock, and the listings it made.
type mirrorFixture struct {
	t     testing.TB
	clock *engine.ManualClock
	k     *engine.Keyring
	name  string
	a, b  *redisstore.Store
	n     int
	seq   map[engine.Handle]uint64
	mu    sync.Mutex
}

var mirrorTenant = engine.Tenant{Game: "g", Env: "e"}

func newMirrorFixture(t testing.TB) *mirrorFixture {
	t.Helper()
	f := &mirrorFixture{t: t, clock: engine.NewManualClock(), k: engine.RandomKeyring(), name: freshName(),
		seq: map[engine.Handle]uint64{}}
	f.a = f.instance()
	f.b = f.instance()
	return f
}

// instance is another store (instance) of the fixture's deployment.
func (f *mirrorFixture) instance() *redisstore.Store {
	f.t.Helper()
	return f.instanceWith(engine.DefaultLimits())
}

// instanceWith is instance with limits l.
func (f *mirrorFixture) instanceWith(l engine.Limits) *redisstore.Store {
	f.t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(f.t), Name: f.name,
		Limits: l, Keyring: f.k, Clock: f.clock})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// create makes a public listing through via (owner o<n>, region and
// protocol as given), not yet visible: its presence is not fresh.
func (f *mirrorFixture) create(via *redisstore.Store, owner engine.Subject, region string, proto uint32) engine.ListingView {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	v, r, err := via.CreateListing(context.Background(), engine.CreateListing{Tenant: mirrorTenant, Owner: owner,
		IdempotencyKey: fmt.Sprintf("k%d", n), Spec: engine.ListingSpec{Region: region, ProtocolVersion: proto,
			BuildVersion: "1", DisplayName: fmt.Sprintf("listing %d", n), Visibility: engine.Public,
			TrustMode: engine.PlayerHosted, MaxPlayers: 8}, Doc: []byte(fmt.Sprintf(`{"n":%d}`, n))})
	if err != nil || !r.OK() {
		f.t.Fatalf("create: %v %v", r.Outcome, err)
	}
	return v
}

// refresh refreshes v's presence through via (it becomes fresh).
func (f *mirrorFixture) refresh(via *redisstore.Store, v engine.ListingView) engine.Result {
	f.t.Helper()
	f.mu.Lock()
	f.seq[v.Presence]++
	seq := f.seq[v.Presence]
	f.mu.Unlock()
	pc := f.k.Presence(v.Presence)
	ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence,
		Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}}}
	if err := via.ApplyBatch(context.Background(), ops); err != nil {
		f.t.Fatalf("refresh: %v", err)
	}
	return ops[0].Result
}

func (f *mirrorFixture) renew(via *redisstore.Store, v *engine.ListingView, players int) {
	f.t.Helper()
	nv, r, err := via.RenewLease(context.Background(), engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner,
		Listing: v.ID, Lease: v.Lease, LeaseKey: f.leaseKey(v), ExpectedVersion: v.Version, CurrentPlayers: players})
	if err != nil || !r.OK() {
		f.t.Fatalf("renew: %v %v", r.Outcome, err)
	}
	*v = nv
}

func (f *mirrorFixture) leaseKey(v *engine.ListingView) engine.Fingerprint {
	c := f.k.Lease(v.Lease)
	return engine.FingerprintOf(&c)
}

// queries are the browses the fixture's listings can show up in.
var mirrorQueries = []engine.Browse{
	{Tenant: mirrorTenant, ProtocolVersion: 1}, {Tenant: mirrorTenant, ProtocolVersion: 1, Region: "eu"},
	{Tenant: mirrorTenant, ProtocolVersion: 1, Region: "us"}, {Tenant: mirrorTenant, ProtocolVersion: 2},
	{Tenant: engine.Tenant{Game: "g", Env: "other"}, ProtocolVersion: 1},
}

// check fails the test unless every page of every query, browsed through
// via's local index, is the page BrowseVisible (Lua, on the shared state)
// answers: the next browse on via shows every write acknowledged before;
// and via's index scopes are consistent (CheckBrowseIndex).
func (f *mirrorFixture) check(via *redisstore.Store, what string) {
	f.t.Helper()
	ctx := context.Background()
	for _, q := range mirrorQueries {
		q.Limit = 7
		for page := 0; page < 1000; page++ {
			items, inext, ir, ierr := via.BrowseItems(ctx, q, nil)
			views, more, r, err := f.a.BrowseVisible(ctx, q, nil)
			checkItemsMatchViews(f.t, q, items, inext.More, ir, ierr, views, more, r, err)
			if f.t.Failed() {
				f.t.Fatalf("after %s", what)
			}
			if !more || len(items) == 0 {
				break
			}
			q.After, q.HasAfter = items[len(items)-1].ID, true
		}
	}
	if err := via.CheckBrowseIndex(); err != nil {
		f.t.Fatalf("after %s: %v", what, err)
	}
}

// count is how many listings of q via's local index shows (one page).
func count(t testing.TB, via *redisstore.Store, q engine.Browse) int {
	t.Helper()
	q.Limit = engine.BrowsePageMax
	items, _, r, err := via.BrowseItems(context.Background(), q, nil)
	if err != nil || !r.OK() {
		t.Fatalf("BrowseItems: %v %v", r.Outcome, err)
	}
	return len(items)
}

// TestBrowseMirrorShowsWritesOfAnotherInstance: a write acknowledged by
// instance a is in the next browse on instance b (and on a): creation
// with presence, players, a renewal's lease, deletion, presence expiry,
// lease expiry, revocation of a listing and of a tenant's principal,
// drain's end.
func TestBrowseMirrorShowsWritesOfAnotherInstance(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	q := engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1}
	f.check(f.b, "nothing")

	v1 := f.create(f.a, "o1", "eu", 1)
	f.check(f.b, "a creation without presence")
	if count(t, f.b, q) != 0 {
		t.Fatal("a listing without presence is browsed")
	}
	f.refresh(f.a, v1)
	if count(t, f.b, q) != 1 {
		t.Fatal("a listing made visible on a is not browsed on b")
	}
	f.check(f.b, "presence")
	v2 := f.create(f.b, "o2", "us", 1)
	f.refresh(f.b, v2)
	v3 := f.create(f.a, "o3", "eu", 2)
	f.refresh(f.b, v3)
	f.check(f.b, "more listings")
	f.check(f.a, "more listings")

	f.renew(f.a, &v1, 5)
	f.check(f.b, "a players change")
	f.clock.Advance(time.Second)
	f.renew(f.a, &v1, -1)
	f.check(f.b, "a renewal")

	if r, err := f.a.DeleteListing(ctx, engine.DeleteListing{Tenant: v2.Tenant, Owner: v2.Owner, Listing: v2.ID,
		Lease: v2.Lease, LeaseKey: f.leaseKey(&v2)}); err != nil || !r.OK() {
		t.Fatalf("delete: %v %v", r.Outcome, err)
	}
	f.check(f.b, "a deletion")

	// Presence expiry: v1 is refreshed again (b's refresh), v3 is not.
	f.clock.Advance(engine.DefaultPresenceTTL - time.Second)
	f.refresh(f.b, v1)
	f.clock.Advance(2 * time.Second)
	f.check(f.b, "a presence expiry")
	if n := count(t, f.b, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 2}); n != 0 {
		t.Fatalf("an expired presence is browsed on b (%d)", n)
	}
	f.refresh(f.a, v3)
	f.check(f.b, "a presence fresh again")

	if r, err := f.a.RevokeListing(ctx, engine.RevokeListing{Tenant: v3.Tenant, Listing: v3.ID}); err != nil || !r.OK() {
		t.Fatalf("revoke listing: %v %v", r.Outcome, err)
	}
	f.check(f.b, "a listing's revocation")

	v4 := f.create(f.a, "o4", "us", 1)
	f.refresh(f.a, v4)
	f.check(f.b, "another listing")
	if _, r, err := f.a.RevokeTenantPrincipal(ctx, mirrorTenant, "o4", time.Minute); err != nil || !r.OK() {
		t.Fatalf("revoke principal: %v %v", r.Outcome, err)
	}
	f.check(f.b, "a tenant revocation")

	// Lease expiry: v1's lease ends without renewal (its presence is kept fresh).
	for i := 0; i < 4; i++ {
		f.clock.Advance(engine.DefaultPresenceTTL - time.Second)
		f.refresh(f.a, v1)
	}
	f.check(f.b, "a lease expiry")
	if count(t, f.b, q) != 0 {
		t.Fatal("a listing whose lease ended is browsed on b")
	}

	v5 := f.create(f.a, "o5", "eu", 1)
	f.refresh(f.a, v5)
	if err := f.a.BeginDrain(ctx); err != nil {
		t.Fatal(err)
	}
	f.check(f.b, "a drain's start")
	f.clock.Advance(engine.DefaultDrainWindow + time.Second)
	f.check(f.b, "a drain's end")
	if count(t, f.b, q) != 0 {
		t.Fatal("a listing erased by the drain's end is browsed on b")
	}
	if err := f.a.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}
