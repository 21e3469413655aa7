package redisstore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// The revocations in the browse change log (browse_revocations.go): an
// instance decides a caller's revocation from its own copy, brought
// forward by the one call its read makes, and honours a revocation
// acknowledged by another instance from its next request on.

var otherTenant = engine.Tenant{Game: "g", Env: "other"}

// readsAs are the three reads that decide their caller's revocation, as
// subject on via, each answering its outcome.
func readsAs(via *redisstore.Store, subject engine.Subject, listing engine.ListingID) map[string]func() (engine.Result, error) {
	ctx := context.Background()
	return map[string]func() (engine.Result, error){
		"browse": func() (engine.Result, error) {
			_, _, r, err := via.BrowseItemsAs(ctx, subject, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: 100}, nil)
			return r, err
		},
		"get listing": func() (engine.Result, error) {
			_, r, err := via.GetListingAs(ctx, subject, engine.GetListing{Tenant: mirrorTenant, Listing: listing, Joinable: true})
			return r, err
		},
		"attempt status": func() (engine.Result, error) {
			_, r, err := via.AttemptStatusAs(ctx, engine.GetAttempt{Tenant: mirrorTenant, Subject: subject,
				Attempt: engine.AttemptID{UUID: listing.UUID}}) // no such attempt: NotFound unless revoked
			return r, err
		},
	}
}

// TestRevocationOnOneInstanceRefusesTheNextReadOnAnother: revocations
// made through a, global and confined to a tenant, refuse the very next
// read and revocation check on b, each in one Redis call; they hold for
// their subject only, in their tenant only, until their deadline, after
// which b serves the subject again.
func TestRevocationOnOneInstanceRefusesTheNextReadOnAnother(t *testing.T) {
	f := newMirrorFixture(t)
	c := redisClient(t)
	ctx := context.Background()
	v := f.create(f.a, "o", "eu", 1)
	f.refresh(f.a, v)
	f.check(f.b, "a listing") // b keeps an index from here on
	if _, r, err := f.a.RevokeTenantPrincipal(ctx, mirrorTenant, "x", 60*time.Second); err != nil || !r.OK() {
		t.Fatalf("revoke x in the tenant: %v %v", r.Outcome, err)
	}
	if _, r, err := f.a.RevokePrincipal(ctx, "y", 30*time.Second); err != nil || !r.OK() {
		t.Fatalf("revoke y: %v %v", r.Outcome, err)
	}
	oneCall := func(what string, fn func() (engine.Result, error), want engine.Outcome) {
		t.Helper()
		before := functionCalls(t, c)
		r, err := fn()
		if n := functionCalls(t, c) - before; n != 1 {
			t.Errorf("%s: %d Redis function calls, want 1", what, n)
		}
		if err != nil || r.Outcome != want {
			t.Errorf("%s: %v %v, want %v", what, r.Outcome, err, want)
		}
	}
	for _, s := range []engine.Subject{"x", "y"} {
		for name, read := range readsAs(f.b, s, v.ID) {
			oneCall(string(s)+": "+name+" on b", read, engine.Revoked)
		}
	}
	for name, read := range readsAs(f.b, "z", v.ID) {
		want := engine.Success
		if name == "attempt status" {
			want = engine.NotFound
		}
		oneCall("z: "+name+" on b", read, want)
	}
	revoked := func(what string, got bool, err error, want bool) {
		t.Helper()
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", what, got, err, want)
		}
	}
	before := functionCalls(t, c)
	got, err := f.b.RevokedInTenant(ctx, mirrorTenant, "x")
	revoked("RevokedInTenant(x) on b", got, err, true)
	if n := functionCalls(t, c) - before; n != 1 {
		t.Errorf("RevokedInTenant on an instance with an index: %d calls, want 1 (the sync)", n)
	}
	got, err = f.b.Revoked(ctx, "x")
	revoked("Revoked(x) on b: confined to a tenant", got, err, false)
	got, err = f.b.RevokedInTenant(ctx, otherTenant, "x")
	revoked("RevokedInTenant(other tenant, x) on b", got, err, false)
	got, err = f.b.Revoked(ctx, "y")
	revoked("Revoked(y) on b", got, err, true)
	got, err = f.b.RevokedInTenant(ctx, otherTenant, "y")
	revoked("RevokedInTenant(other tenant, y) on b", got, err, true)

	f.clock.Advance(30 * time.Second) // y's deadline: gone, x's still ahead
	got, err = f.b.Revoked(ctx, "y")
	revoked("Revoked(y) on b at its deadline", got, err, false)
	if r, err := readsAs(f.b, "y", v.ID)["browse"](); err != nil || !r.OK() {
		t.Errorf("y browses on b after its revocation's deadline: %v %v", r.Outcome, err)
	}
	if r, err := readsAs(f.b, "x", v.ID)["browse"](); err != nil || r.Outcome != engine.Revoked {
		t.Errorf("x browses on b before its revocation's deadline: %v %v", r.Outcome, err)
	}
	// Re-timed through a: the later deadline holds on b.
	if _, r, err := f.a.RevokePrincipal(ctx, "y", 60*time.Second); err != nil || !r.OK() {
		t.Fatalf("revoke y again: %v %v", r.Outcome, err)
	}
	got, err = f.b.Revoked(ctx, "y")
	revoked("Revoked(y) on b, revoked again", got, err, true)
	f.clock.Advance(31 * time.Second)
	got, err = f.b.RevokedInTenant(ctx, mirrorTenant, "x")
	revoked("RevokedInTenant(x) on b past its deadline", got, err, false)
	got, err = f.b.Revoked(ctx, "y")
	revoked("Revoked(y) on b before its new deadline", got, err, true)
}

// TestRevocationsHoldThroughARebuildAndARestart: an instance whose
// version the log no longer holds, and one started after the revocation,
// rebuild their copy from the live revocations.
func TestRevocationsHoldThroughARebuildAndARestart(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	vs := f.visibleListings(100)
	f.check(f.b, "the listings")
	if _, r, err := f.a.RevokeTenantPrincipal(ctx, mirrorTenant, "x", 600*time.Second); err != nil || !r.OK() {
		t.Fatalf("revoke x: %v %v", r.Outcome, err)
	}
	f.trimLog(vs)
	for name, read := range readsAs(f.b, "x", vs[0].ID) {
		if r, err := read(); err != nil || r.Outcome != engine.Revoked {
			t.Errorf("x: %s on b after a rebuild: %v %v, want Revoked", name, r.Outcome, err)
		}
	}
	f.check(f.b, "the log trimmed past b's version")
	restarted := f.instance()
	if r, err := readsAs(restarted, "x", vs[0].ID)["browse"](); err != nil || r.Outcome != engine.Revoked {
		t.Errorf("x: the first browse of a restarted instance: %v %v, want Revoked", r.Outcome, err)
	}
	if got, err := restarted.RevokedInTenant(ctx, mirrorTenant, "x"); err != nil || !got {
		t.Errorf("RevokedInTenant(x) on a restarted instance: %v %v", got, err)
	}
}

// TestLocalRevocationsStayWithinThePool: the copy drops revocations past
// their deadline once it holds more than the pool's ceiling, so it never
// holds more than the pool can.
func TestLocalRevocationsStayWithinThePool(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	l := engine.DefaultLimits()
	l.MaxRevocations = 8
	a, b := f.instanceWith(l), f.instanceWith(l)
	if _, _, r, err := b.BrowseItems(ctx, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: 1}, nil); err != nil || !r.OK() {
		t.Fatalf("b's first browse: %v %v", r.Outcome, err) // b keeps an index from here on
	}
	subjects := func(round int) []engine.Subject {
		s := make([]engine.Subject, l.MaxRevocations)
		for i := range s {
			s[i] = engine.Subject(string(rune('a'+round)) + string(rune('a'+i)))
		}
		return s
	}
	for round := 0; round < 4; round++ {
		for _, s := range subjects(round) {
			if _, r, err := a.RevokePrincipal(ctx, s, time.Second); err != nil || !r.OK() {
				t.Fatalf("round %d: revoke %s: %v %v", round, s, r.Outcome, err)
			}
		}
		for _, s := range subjects(round) {
			if got, err := b.Revoked(ctx, s); err != nil || !got {
				t.Fatalf("round %d: Revoked(%s) on b: %v %v", round, s, got, err)
			}
		}
		if round > 0 {
			if got, err := b.Revoked(ctx, subjects(round - 1)[0]); err != nil || got {
				t.Fatalf("round %d: a revocation of the round before, past its deadline, holds on b: %v %v", round, got, err)
			}
		}
		if n := b.LocalRevocations(); n > l.MaxRevocations {
			t.Fatalf("round %d: b holds %d revocations, the pool at most %d", round, n, l.MaxRevocations)
		}
		f.clock.Advance(time.Second)
	}
}

// TestRevocationRacingReadsOnAnotherInstance: while goroutines read on b
// as one subject, a revokes it; every read that began after the
// revocation was acknowledged answers Revoked.
func TestRevocationRacingReadsOnAnotherInstance(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	v := f.create(f.a, "o", "eu", 1)
	f.refresh(f.a, v)
	f.check(f.b, "a listing")
	var acked atomic.Bool
	var late, refusedLate atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reads := readsAs(f.b, "racer", v.ID)
			names := []string{"browse", "get listing", "attempt status"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				after := acked.Load()
				r, err := reads[names[(g+i)%len(names)]]()
				if err != nil {
					t.Errorf("%s: %v", names[(g+i)%len(names)], err)
					return
				}
				if after {
					late.Add(1)
					if r.Outcome == engine.Revoked {
						refusedLate.Add(1)
					} else {
						t.Errorf("%s begun after the revocation was acknowledged: %v", names[(g+i)%len(names)], r.Outcome)
					}
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	if _, r, err := f.a.RevokeTenantPrincipal(ctx, mirrorTenant, "racer", 60*time.Second); err != nil || !r.OK() {
		t.Fatalf("revoke: %v %v", r.Outcome, err)
	}
	acked.Store(true)
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if late.Load() == 0 {
		t.Fatal("no read began after the revocation: the test tests nothing")
	}
	t.Logf("%d reads began after the revocation, %d refused", late.Load(), refusedLate.Load())
}
