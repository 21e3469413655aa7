package storetest

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

var netipZero netip.AddrPort

// runExpiry checks that every pool expires exactly at its deadline on
// monotonic time: alive at deadline-1ns, gone at the deadline.
func runExpiry(t *testing.T, f Factory) {

	t.Run("LeaseExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		if v.LeaseTTL != e.l.LeaseTTL || !v.LeaseExpiresAt.Equal(e.c.Wall().Add(e.l.LeaseTTL)) {
			t.Fatalf("created lease: ttl %v expires %v, want %v at %v", v.LeaseTTL, v.LeaseExpiresAt, e.l.LeaseTTL, e.c.Wall().Add(e.l.LeaseTTL))
		}
		e.c.Advance(e.l.LeaseTTL - ns)
		e.wantGet(v.ID, false, engine.Success)
		e.c.Advance(ns)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantUsed(engine.PoolListings, 0)
		e.check()
	})

	t.Run("RenewedLeaseExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		e.c.Advance(10 * time.Second)
		rv, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v))
		e.want("RenewLease", r, err, engine.Success)
		if !rv.LeaseExpiresAt.Equal(e.c.Wall().Add(e.l.LeaseTTL)) || rv.LeaseTTL != e.l.LeaseTTL {
			t.Fatalf("renewed lease expires %v, want %v", rv.LeaseExpiresAt, e.c.Wall().Add(e.l.LeaseTTL))
		}
		e.c.Advance(e.l.LeaseTTL - ns)
		e.wantGet(v.ID, false, engine.Success)
		e.c.Advance(ns)
		e.wantGet(v.ID, false, engine.NotFound)
	})

	t.Run("PresenceExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		pv := e.presence(v, 1, pub(40000))
		if pv.TTL != e.l.PresenceTTL || pv.Listing != v.ID {
			t.Fatalf("presence view: ttl %v listing ok=%v, want %v", pv.TTL, pv.Listing == v.ID, e.l.PresenceTTL)
		}
		e.c.Advance(e.l.PresenceTTL - ns)
		got := e.wantGet(v.ID, true, engine.Success)
		if !got.PresenceFresh || got.HostPublic != pub(40000) {
			t.Fatalf("fresh presence not reported: fresh=%v public=%v", got.PresenceFresh, got.HostPublic)
		}
		e.wantUsed(engine.PoolPresence, 1)
		e.c.Advance(ns)
		e.wantGet(v.ID, true, engine.NotFound)
		if got := e.wantGet(v.ID, false, engine.Success); got.PresenceFresh {
			t.Fatalf("expired presence still reported fresh")
		}
		e.wantUsed(engine.PoolPresence, 0)
		e.check()
	})

	t.Run("AttemptExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		if a.TTL != e.l.AttemptTTL || !a.ExpiresAt.Equal(e.c.Wall().Add(e.l.AttemptTTL)) {
			t.Fatalf("attempt ttl %v expires %v", a.TTL, a.ExpiresAt)
		}
		e.c.Advance(e.l.AttemptTTL - ns)
		e.presence(v, 2, pub(40000)) // keep the listing fresh; irrelevant to the attempt
		if h, ok := e.s.AttemptHost(a.Handle); !ok || h != v.Presence {
			t.Fatalf("AttemptHost before deadline: ok=%v", ok)
		}
		e.wantUsed(engine.PoolAttempts, 1)
		e.c.Advance(ns)
		e.wantAttempt(a.Handle, false, "AttemptHost finds an attempt at its deadline")
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction at deadline", r, err, engine.NotFound)
		e.wantUsed(engine.PoolAttempts, 0)
		e.check()
	})

	t.Run("ReplayExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		tk := engine.ConsumeReplay{Namespace: "ns", Key: "k", Lifetime: 7 * time.Second}
		r, err := e.s.ConsumeReplay(e.ctx, tk)
		e.want("ConsumeReplay", r, err, engine.Success)
		e.c.Advance(7*time.Second - ns)
		r, err = e.s.ConsumeReplay(e.ctx, tk)
		e.want("ConsumeReplay before deadline", r, err, engine.ReplayRejected)
		e.wantUsed(engine.PoolReplay, 1)
		e.c.Advance(ns)
		e.wantUsed(engine.PoolReplay, 0)
		r, err = e.s.ConsumeReplay(e.ctx, tk)
		e.want("ConsumeReplay at deadline", r, err, engine.Success)
		// Lifetime 0 means the configured replay lifetime.
		def := engine.ConsumeReplay{Namespace: "ns", Key: "default"}
		r, err = e.s.ConsumeReplay(e.ctx, def)
		e.want("ConsumeReplay default lifetime", r, err, engine.Success)
		e.c.Advance(e.l.ReplayTTL - ns)
		r, err = e.s.ConsumeReplay(e.ctx, def)
		e.want("ConsumeReplay before default deadline", r, err, engine.ReplayRejected)
		e.c.Advance(ns)
		r, err = e.s.ConsumeReplay(e.ctx, def)
		e.want("ConsumeReplay at default deadline", r, err, engine.Success)
	})

	t.Run("RevocationExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		_, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", 90*time.Second)
		e.want("RevokePrincipal", r, err, engine.Success)
		e.c.Advance(90*time.Second - ns)
		if ok, err := e.s.Revoked(e.ctx, "publisher-1"); err != nil || !ok {
			t.Fatalf("Revoked before deadline = %v, %v", ok, err)
		}
		e.wantUsed(engine.PoolRevocations, 1)
		_, r, err = e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
		e.want("CreateListing before revocation deadline", r, err, engine.Revoked)
		e.c.Advance(ns)
		if ok, err := e.s.Revoked(e.ctx, "publisher-1"); err != nil || ok {
			t.Fatalf("Revoked at deadline = %v, %v", ok, err)
		}
		e.wantUsed(engine.PoolRevocations, 0)
		e.create(e.listingCmd("publisher-1"))
	})

	t.Run("IdempotencyExactDeadline", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		v := e.create(cmd)
		e.c.Advance(e.l.LeaseTTL)
		e.wantGet(v.ID, false, engine.NotFound)
		e.c.Advance(e.l.IdempotencyTTL - e.l.LeaseTTL - ns)
		_, r, err := e.s.CreateListing(e.ctx, cmd)
		e.want("CreateListing replay before idempotency deadline", r, err, engine.Expired)
		e.wantUsed(engine.PoolIdempotency, 1)
		e.c.Advance(ns)
		e.wantUsed(engine.PoolIdempotency, 0)
		v2 := e.create(cmd)
		if v2.ID == v.ID {
			t.Fatalf("fresh creation after the idempotency record expired returned the old ID")
		}
	})

	t.Run("DrainExactDeadline", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.DrainWindow = 5 * time.Second })
		v := e.visible("publisher-1")
		if err := e.s.BeginDrain(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.c.Advance(3 * time.Second)
		if err := e.s.BeginDrain(e.ctx); err != nil { // idempotent: does not move the deadline
			t.Fatal(err)
		}
		e.c.Advance(2*time.Second - ns)
		e.wantGet(v.ID, true, engine.Success)
		e.c.Advance(ns)
		e.wantGet(v.ID, false, engine.NotFound)
		e.check()
	})

	t.Run("WallClockNeverExpiresOrExtends", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		_, r, err := e.s.RevokePrincipal(e.ctx, "someone", time.Minute)
		e.want("RevokePrincipal", r, err, engine.Success)
		e.c.MoveWall(365 * 24 * time.Hour)
		e.wantGet(v.ID, true, engine.Success)
		e.wantAttempt(a.Handle, true, "wall clock jump expired an attempt")
		e.c.MoveWall(-2 * 365 * 24 * time.Hour)
		e.c.Advance(e.l.PresenceTTL)
		e.wantGet(v.ID, true, engine.NotFound)
		e.c.Advance(e.l.AttemptTTL - e.l.PresenceTTL)
		e.wantAttempt(a.Handle, false, "wall clock jump back prolonged an attempt")
		e.c.Advance(e.l.LeaseTTL - e.l.AttemptTTL)
		e.wantGet(v.ID, false, engine.NotFound)
		if ok, _ := e.s.Revoked(e.ctx, "someone"); ok {
			t.Fatalf("wall clock jump back prolonged a revocation")
		}
	})

	// AttemptHost is a read that runs no cleanup in some stores, so it must
	// itself treat an attempt whose listing's lease has ended as gone (the
	// attempt's own deadline is later): the mediator derives h: keys from it.
	t.Run("AttemptHostEndsWithTheLeaseBeforeCleanup", func(t *testing.T) {
		e, v, a := leaseEndsFirst(t, f)
		e.c.Advance(20*time.Second - ns)
		if ph, ok := e.s.AttemptHost(a.Handle); !ok || ph != v.Presence {
			t.Fatalf("AttemptHost before the lease deadline = %v %v, want the listing's presence handle", ph, ok)
		}
		e.c.Advance(ns) // no transition runs in between
		e.wantAttempt(a.Handle, false, "AttemptHost answers for an attempt whose listing's lease ended")
	})

	t.Run("LeaseExpiryCascades", func(t *testing.T) {
		e, v, a := leaseEndsFirst(t, f)
		e.bind(e.bindCmd(a, engine.RoleClient, otherPub(1000), netipZero))
		e.c.Advance(20*time.Second - ns)
		e.wantAttempt(a.Handle, true, "attempt gone before its listing's lease deadline")
		e.c.Advance(ns)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantAttempt(a.Handle, false, "attempt survives its listing's lease expiry")
		e.wantBind(e.bindCmd(a, engine.RoleHost, pub(1000), netipZero), engine.NotFound, "bind on cascaded attempt")
		_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 3, pub(40000)))
		e.want("presence of expired listing", r, err, engine.NotFound)
		for _, p := range []engine.Pool{engine.PoolListings, engine.PoolPresence, engine.PoolAttempts} {
			e.wantUsed(p, 0)
		}
		if st := e.s.Stats(); st.InFlight != 0 {
			t.Fatalf("InFlight = %d after cascade, want 0", st.InFlight)
		}
		e.check()
	})
}

// leaseEndsFirst is a listing whose lease (60s) ends before the deadline
// (70s) of its attempt a, created at 40s.
func leaseEndsFirst(t *testing.T, f Factory) (*env, engine.ListingView, engine.AttemptView) {
	t.Helper()
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	e.c.Advance(40 * time.Second)
	e.presence(v, 2, pub(40000))
	return e, v, e.attempt(v, "client-1")
}
