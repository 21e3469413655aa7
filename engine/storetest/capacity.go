package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runCapacity exhausts each pool and quota in turn and checks the shed call
// names the right pool, reports Quota() only for quotas, and leaves every
// collection untouched; then that a slot freed is usable again.
func runCapacity(t *testing.T, f Factory) {
	t.Run("Listings", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxListings = 3 }, wholePools)
		var vs []engine.ListingView
		for i := 0; i < 3; i++ {
			vs = append(vs, e.visible(engine.Subject(fmt.Sprintf("publisher-%d", i))))
		}
		e.attempt(vs[0], "client-1")
		e.shedListing("listings full", e.listingCmd("publisher-9"), engine.PoolListings)
		r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(vs[1]))
		e.want("DeleteListing", r, err, engine.Success)
		e.create(e.listingCmd("publisher-9"))
	})

	t.Run("Presence", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxPresence = 2 })
		a := e.visible("publisher-1")
		b := e.visible("publisher-2")
		c := e.create(e.listingCmd("publisher-3"))
		e.unchanged("presence full", func() {
			_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(c, 1, pub(1)))
			e.wantShed("BindHostPresence", r, err, engine.PoolPresence)
		})
		// Refreshing a binding that already holds a slot needs no new slot.
		e.presence(a, 2, pub(2))
		// A slot freed by presence expiry is usable; the shed seq was not recorded.
		e.c.Advance(e.l.PresenceTTL)
		e.presence(c, 1, pub(3))
		e.presence(b, 2, pub(4))
		e.unchanged("presence full again", func() {
			_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(a, 3, pub(5)))
			e.wantShed("BindHostPresence", r, err, engine.PoolPresence)
		})
	})

	t.Run("Attempts", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxAttempts = 2 }, wholePools)
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		e.shedAttempt("attempts full", e.attemptCmd(v, "client-3"), engine.PoolAttempts)
		e.c.Advance(e.l.AttemptTTL)
		e.presence(v, 2, pub(40000))
		e.attempt(v, "client-3")
	})

	t.Run("Replay", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxReplay = 2 })
		e.visible("publisher-1")
		for _, k := range []string{"a", "b"} {
			r, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: k})
			e.want("ConsumeReplay", r, err, engine.Success)
		}
		e.unchanged("replay full", func() {
			r, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "c"})
			e.wantShed("ConsumeReplay", r, err, engine.PoolReplay)
			// A consumed ticket is still rejected as a replay, not as capacity.
			r, err = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "a"})
			e.want("ConsumeReplay of a consumed ticket", r, err, engine.ReplayRejected)
		})
		// Namespaces separate tickets.
		e.unchanged("other namespace full", func() {
			r, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "m", Key: "a"})
			e.wantShed("ConsumeReplay other namespace", r, err, engine.PoolReplay)
		})
	})

	t.Run("Revocations", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxRevocations = 2 })
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		for _, s := range []engine.Subject{"x", "y"} {
			_, r, err := e.s.RevokePrincipal(e.ctx, s, time.Minute)
			e.want("RevokePrincipal", r, err, engine.Success)
		}
		for _, s := range []engine.Subject{"publisher-1", "client-1"} {
			e.unchanged("revocations full", func() {
				n, r, err := e.s.RevokePrincipal(e.ctx, s, time.Minute)
				e.wantShed("RevokePrincipal", r, err, engine.PoolRevocations)
				if n != 0 {
					t.Fatalf("shed revocation removed %d", n)
				}
			})
		}
		if ok, _ := e.s.Revoked(e.ctx, "publisher-1"); ok {
			t.Fatalf("shed revocation was recorded")
		}
		e.wantAttempt(a.Handle, true, "shed revocation removed an attempt")
		// Re-revoking a subject already revoked needs no new slot.
		_, r, err := e.s.RevokePrincipal(e.ctx, "x", 2*time.Minute)
		e.want("RevokePrincipal again", r, err, engine.Success)
		e.c.Advance(time.Minute)
		if ok, _ := e.s.Revoked(e.ctx, "x"); !ok {
			t.Fatalf("re-revocation did not extend the revocation")
		}
	})

	t.Run("IdempotencyForListings", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxIdempotency = 2 }, wholePools)
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.shedCreates("idempotency full", e.listingCmd("publisher-2"), e.attemptCmd(v, "client-2"), engine.PoolIdempotency)
		e.wantUsed(engine.PoolListings, 1)
		e.wantUsed(engine.PoolAttempts, 1)
	})

	t.Run("OwnerQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.OwnerListingQuota = 2 })
		a := e.create(e.listingCmd("publisher-1"))
		e.create(e.listingCmd("publisher-1"))
		e.shedListing("owner quota", e.listingCmd("publisher-1"), engine.QuotaOwnerListings)
		// Other owners are not affected; the same owner in another tenant is
		// a separate quota scope only if the store says so, so not tested.
		e.create(e.listingCmd("publisher-2"))
		r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(a))
		e.want("DeleteListing", r, err, engine.Success)
		e.create(e.listingCmd("publisher-1"))
		// Expiry frees quota too.
		e.c.Advance(e.l.LeaseTTL)
		e.create(e.listingCmd("publisher-1"))
		e.create(e.listingCmd("publisher-1"))
	})

	t.Run("TenantAttemptQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.TenantAttemptQuota = 2 })
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		e.shedAttempt("tenant attempt quota", e.attemptCmd(v, "client-3"), engine.QuotaTenantAttempts)
		// Another tenant has its own quota.
		oc := e.listingCmd("publisher-1")
		oc.Tenant = otherTenant
		ov := e.create(oc)
		e.presence(ov, 1, pub(2))
		e.attempt(ov, "client-3")
	})

	t.Run("SubjectAttemptQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.SubjectAttemptQuota = 2 })
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.attempt(v, "client-1")
		e.shedAttempt("subject attempt quota", e.attemptCmd(v, "client-1"), engine.QuotaSubjectAttempts)
		// Other clients of the same tenant are not affected; expiry frees it.
		e.attempt(v, "client-2")
		e.c.Advance(e.l.AttemptTTL)
		e.presence(v, 2, pub(2))
		e.attempt(v, "client-1")
	})

	t.Run("TenantListingQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.TenantListingQuota = 2 })
		a := e.create(e.listingCmd("publisher-1"))
		e.create(e.listingCmd("publisher-2"))
		e.shedListing("tenant listing quota", e.listingCmd("publisher-3"), engine.QuotaTenantListings)
		oc := e.listingCmd("publisher-3")
		oc.Tenant = otherTenant
		e.create(oc)
		r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(a))
		e.want("DeleteListing", r, err, engine.Success)
		e.create(e.listingCmd("publisher-3"))
	})

	t.Run("TenantIdempotencyQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.TenantIdempotencyQuota = 3 })
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		e.shedCreates("tenant idempotency quota", e.listingCmd("publisher-2"), e.attemptCmd(v, "client-3"), engine.QuotaTenantIdempotency)
		// The records outlive their attempts: the share is still used after
		// the attempts are gone, until the records expire.
		e.c.Advance(e.l.AttemptTTL)
		e.wantAttempt(a.Handle, false, "attempt outlived its lifetime")
		e.shedListing("records outlive attempts", e.listingCmd("publisher-2"), engine.QuotaTenantIdempotency)
		// Another tenant has its own share of the pool.
		oc := e.listingCmd("publisher-2")
		oc.Tenant = otherTenant
		e.create(oc)
		e.c.Advance(e.l.IdempotencyTTL - e.l.AttemptTTL)
		e.create(e.listingCmd("publisher-2"))
	})

	t.Run("SubjectIdempotencyQuota", func(t *testing.T) { runSubjectIdempotencyQuota(t, f) })

	t.Run("OwnQuotaBeforeTenantQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) {
			l.OwnerListingQuota, l.TenantListingQuota = 1, 1
			l.SubjectAttemptQuota, l.TenantAttemptQuota = 1, 1
		})
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.unchanged("both listing quotas", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
			e.wantShed("CreateListing", r, err, engine.QuotaOwnerListings)
			_, r, err = e.s.CreateListing(e.ctx, e.listingCmd("publisher-2"))
			e.wantShed("CreateListing", r, err, engine.QuotaTenantListings)
		})
		e.unchanged("both attempt quotas", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-1"))
			e.wantShed("CreateJoinAttempt", r, err, engine.QuotaSubjectAttempts)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-2"))
			e.wantShed("CreateJoinAttempt", r, err, engine.QuotaTenantAttempts)
		})
	})

	t.Run("GlobalPoolBeforeQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) {
			l.MaxListings, l.MaxAttempts = 2, 1
		}, wholePools)
		v := e.visible("publisher-1")
		e.create(e.listingCmd("publisher-1"))
		e.shedListing("both listing limits", e.listingCmd("publisher-1"), engine.PoolListings)
		e.attempt(v, "client-1")
		e.shedAttempt("both attempt limits", e.attemptCmd(v, "client-2"), engine.PoolAttempts)
	})

	t.Run("IdempotencyPoolBeforeQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxIdempotency = 1 }, wholePools, func(l *engine.Limits) { l.OwnerListingQuota = 1 })
		e.create(e.listingCmd("publisher-1"))
		e.shedListing("idempotency and quota", e.listingCmd("publisher-1"), engine.PoolIdempotency)
	})

	t.Run("ReplayOfExistingNeedsNoCapacity", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxListings, l.MaxIdempotency, l.MaxAttempts = 1, 2, 1 }, wholePools)
		cmd := e.listingCmd("publisher-1")
		v := e.create(cmd)
		e.presence(v, 1, pub(1))
		v, _ = e.get(v.ID, true)
		ac := e.attemptCmd(v, "client-1")
		_, r, err := e.s.CreateJoinAttempt(e.ctx, ac)
		e.want("CreateJoinAttempt", r, err, engine.Success)
		e.unchanged("replays at full pools", func() {
			_, r, err := e.s.CreateListing(e.ctx, cmd)
			e.want("CreateListing replay at full pools", r, err, engine.Success)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, ac)
			e.want("CreateJoinAttempt replay at full pools", r, err, engine.Success)
		})
	})
}

// runSubjectIdempotencyQuota: one principal creating and deleting with a
// new Idempotency-Key each time keeps a record per creation for the
// idempotency lifetime; its own share of the records stops it (429
// subject_idempotency) long before its tenant's share, so every other
// principal of the tenant still creates and joins. Racing creations of one
// principal get exactly its share.
func runSubjectIdempotencyQuota(t *testing.T, f Factory) {
	const share = 3
	e := newEnv(t, f, func(l *engine.Limits) {
		l.MaxIdempotency, l.TenantIdempotencyQuota, l.SubjectIdempotencyQuota = 40, 3*share+2, share
	})
	for i := 0; i < 10; i++ {
		cmd := e.listingCmd("churn-publisher")
		if i < share {
			v := e.create(cmd)
			r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(v))
			e.want("DeleteListing", r, err, engine.Success)
			continue
		}
		e.unchanged("subject idempotency share", func() {
			_, r, err := e.s.CreateListing(e.ctx, cmd)
			e.wantShed("CreateListing", r, err, engine.QuotaSubjectIdempotency)
		})
	}
	// The tenant's other principals are unaffected: a publisher lists, a
	// client joins, until the client's own share is used.
	v := e.visible("publisher-2")
	for i := 0; i < share; i++ {
		e.attempt(v, "client-1")
	}
	e.unchanged("client idempotency share", func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-1"))
		e.wantShed("CreateJoinAttempt", r, err, engine.QuotaSubjectIdempotency)
	})
	// The share is the subject's, as its attempt quota is, whichever
	// tenant it creates in.
	e.unchanged("the subject's share in another tenant", func() {
		cmd := e.listingCmd("churn-publisher")
		cmd.Tenant = otherTenant
		_, r, err := e.s.CreateListing(e.ctx, cmd)
		e.wantShed("CreateListing other tenant", r, err, engine.QuotaSubjectIdempotency)
	})

	// Racing creations of one principal: exactly its share is admitted.
	cmds := make([]engine.CreateListing, 4*share)
	for i := range cmds {
		cmds[i] = e.listingCmd("racer")
	}
	var ok, shed atomic.Int64
	var wg sync.WaitGroup
	for _, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, r, err := e.s.CreateListing(e.ctx, c)
			switch {
			case err != nil:
				t.Errorf("CreateListing: %v", err)
			case r.OK():
				ok.Add(1)
			case r.Pool == engine.QuotaSubjectIdempotency:
				shed.Add(1)
			default:
				t.Errorf("racing CreateListing: %v, want success or %v", r, engine.QuotaSubjectIdempotency)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != share || shed.Load() != int64(len(cmds)-share) {
		t.Fatalf("racing creations of one principal: %d admitted, %d shed; want %d, %d", ok.Load(), shed.Load(), share, len(cmds)-share)
	}
	e.check()
	// The records expire after their lifetime, and the share with them.
	e.c.Advance(e.l.IdempotencyTTL)
	e.create(e.listingCmd("churn-publisher"))
}
