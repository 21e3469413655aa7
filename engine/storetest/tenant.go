package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

const ns = time.Nanosecond

// visibleIn registers a listing of owner in tenant t and binds its presence.
func (e *env) visibleIn(t engine.Tenant, owner engine.Subject) engine.ListingView {
	e.t.Helper()
	cmd := e.listingCmd(owner)
	cmd.Tenant = t
	v := e.create(cmd)
	e.presence(v, 1, pub(40000))
	return v
}

// wantUsage requires t's used counts (listings, attempts, idempotency) and
// the quotas the store's Limits set.
func (e *env) wantUsage(t engine.Tenant, listings, attempts, idem int) {
	e.t.Helper()
	got := e.s.TenantUsage(t)
	want := e.l.TenantQuotas()
	want.Listings.Used, want.Attempts.Used, want.Idempotency.Used = listings, attempts, idem
	if got != want {
		e.t.Fatalf("TenantUsage(%v) = %+v, want %+v", t, got, want)
	}
}

// runTenantUsage covers TenantUsage: per-tenant counts that follow every
// insertion, removal and expiry, and the quotas.
func runTenantUsage(t *testing.T, f Factory) {
	t.Run("CountsFollowEveryChange", func(t *testing.T) {
		e := newEnv(t, f)
		e.wantUsage(tenant, 0, 0, 0)
		v := e.visible("publisher-1")
		w := e.visibleIn(otherTenant, "publisher-2")
		a := e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		e.attempt(w, "client-1")
		e.wantUsage(tenant, 1, 2, 3)
		e.wantUsage(otherTenant, 1, 1, 2)
		// A replay creates nothing; an invalid tenant has nothing.
		cmd := e.attemptCmd(v, "client-3")
		e.attemptFrom(cmd)
		_, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("CreateJoinAttempt replay", r, err, engine.Success)
		e.wantUsage(tenant, 1, 3, 4)
		e.wantUsage(engine.Tenant{Game: "Bad Game", Env: "x"}, 0, 0, 0)

		// Deleting the listing cascades its attempts; idempotency records stay
		// until their own deadline.
		r, err = e.s.DeleteListing(e.ctx, e.deleteCmd(v))
		e.want("DeleteListing", r, err, engine.Success)
		e.wantUsage(tenant, 0, 0, 4)
		e.wantAttempt(a.Handle, false, "the deleted listing's attempt survives")
		e.wantUsage(otherTenant, 1, 1, 2)
		// Expiry: the other tenant's attempt (30s), then its listing (60s),
		// then every idempotency record.
		e.c.Advance(e.l.AttemptTTL)
		e.wantUsage(otherTenant, 1, 0, 2)
		e.c.Advance(e.l.IdempotencyTTL)
		e.wantUsage(otherTenant, 0, 0, 0)
		e.wantUsage(tenant, 0, 0, 0)
		e.check()
	})

	t.Run("AttemptHeadroomIsTheQuotaLeft", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.TenantAttemptQuota = 2 })
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		e.attempt(v, "client-2")
		u := e.s.TenantUsage(tenant)
		if u.Attempts.Used != 2 || u.Attempts.Ceiling-u.Attempts.Used != 0 {
			t.Fatalf("attempts %+v, want used 2 with no headroom", u.Attempts)
		}
		e.unchanged("attempt over the tenant quota", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-3"))
			e.wantShed("CreateJoinAttempt over the quota", r, err, engine.QuotaTenantAttempts)
		})
		e.wantUsage(tenant, 1, 2, 3)
	})

	t.Run("DrainEndAndUnavailableEmptyIt", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.attempt(v, "client-1")
		if err := e.s.BeginDrain(e.ctx); err != nil {
			t.Fatal(err)
		}
		e.wantUsage(tenant, 1, 1, 2)
		e.c.Advance(e.l.DrainWindow)
		e.wantUsage(tenant, 0, 0, 0)

		g := newEnv(t, f)
		w := g.visible("publisher-1")
		g.attempt(w, "client-1")
		g.s.MarkUnavailable()
		g.wantUsage(tenant, 0, 0, 0)
		g.check()
	})
}

// runTenantRevocation covers RevokeTenantPrincipal and RevokedInTenant: a
// revocation confined to one tenant removes and blocks only there.
func runTenantRevocation(t *testing.T, f Factory) {
	t.Run("ConfinedToItsTenant", func(t *testing.T) {
		e := newEnv(t, f)
		here := e.visible("publisher-1")
		here2 := e.visible("publisher-1")
		there := e.visibleIn(otherTenant, "publisher-1")
		hostHere := e.visible("publisher-2")
		hostThere := e.visibleIn(otherTenant, "publisher-2")
		onOwn := e.attempt(here, "client-9")           // cascades with here, not counted
		byHere := e.attempt(hostHere, "publisher-1")   // created in tenant: counted
		byThere := e.attempt(hostThere, "publisher-1") // other tenant: kept
		n, r, err := e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-1", time.Minute)
		e.want("RevokeTenantPrincipal", r, err, engine.Success)
		if n != 3 {
			t.Fatalf("removed = %d, want 3 (two listings and one attempt in the tenant)", n)
		}
		e.wantCascade("tenant revocation", []engine.ListingID{here.ID, here2.ID}, []engine.Handle{onOwn.Handle, byHere.Handle}, hostHere.ID, byThere.Handle)
		if _, r := e.getIn(otherTenant, there.ID); r.Outcome != engine.Success {
			t.Fatalf("tenant revocation removed a listing of another tenant: %v", r.Outcome)
		}
		e.wantRevoked("publisher-1", false, true, false)
		e.wantUsed(engine.PoolRevocations, 1)
		e.unchanged("new work in the revoking tenant", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
			e.want("CreateListing in the tenant", r, err, engine.Revoked)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(hostHere, "publisher-1"))
			e.want("CreateJoinAttempt in the tenant", r, err, engine.Revoked)
		})
		e.unchanged("renewal in the revoking tenant", func() {
			stranger := e.renewCmd(hostHere)
			stranger.Owner = "publisher-1"
			for _, c := range []engine.RenewLease{e.renewCmd(here), stranger} {
				_, r, err := e.s.RenewLease(e.ctx, c)
				e.want("RenewLease in the tenant", r, err, engine.Revoked)
			}
		})
		// Elsewhere the subject works on.
		_, r, err = e.s.RenewLease(e.ctx, e.renewCmd(there))
		e.want("RenewLease in another tenant", r, err, engine.Success)
		e.visibleIn(otherTenant, "publisher-1")
		e.attempt(hostThere, "publisher-1")
		// Re-revoking re-times it and takes no second slot; it then expires.
		e.c.Advance(30 * time.Second)
		_, r, err = e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-1", time.Minute)
		e.want("RevokeTenantPrincipal again", r, err, engine.Success)
		e.wantUsed(engine.PoolRevocations, 1)
		e.c.Advance(time.Minute - ns)
		e.wantRevoked("publisher-1", false, true, false)
		e.c.Advance(ns)
		e.wantRevoked("publisher-1", false, false, false)
		e.wantUsed(engine.PoolRevocations, 0)
		e.visible("publisher-1")
		e.check()
	})

	// Creations in both tenants race one tenant revocation: whatever the
	// order, nothing of the subject's survives in the revoked tenant (a
	// creation before it is removed, one after it refused) and nothing in
	// the other tenant is touched.
	t.Run("RacingCreations", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.OwnerListingQuota = racers })
		cmds := make([]engine.CreateListing, racers)
		for i := range cmds {
			cmds[i] = e.listingCmd("publisher-1")
			if i%2 == 1 {
				cmds[i].Tenant = otherTenant
			}
		}
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		views := make([]engine.ListingView, racers)
		var removed int
		race(func(i int) {
			if i == 0 {
				removed, rs[i], errs[i] = e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-1", time.Minute)
				return
			}
			views[i], rs[i], errs[i] = e.s.CreateListing(e.ctx, cmds[i])
		})
		removedHere := 0
		for i := range rs {
			if errs[i] != nil {
				t.Fatalf("racer %d: %v", i, errs[i])
			}
			switch {
			case i == 0 || i%2 == 1:
				e.want("racer in the other tenant or the revocation", rs[i], errs[i], engine.Success)
			case rs[i].Outcome == engine.Success:
				removedHere++
				e.wantGet(views[i].ID, false, engine.NotFound) // created before the revocation: removed
			default:
				e.want("creation after the revocation", rs[i], errs[i], engine.Revoked)
			}
		}
		for i := 1; i < racers; i += 2 {
			if _, r := e.getIn(otherTenant, views[i].ID); r.Outcome != engine.Success {
				t.Fatalf("a listing of the other tenant is gone: %v", r.Outcome)
			}
		}
		if removed != removedHere {
			t.Fatalf("revocation removed %d, but %d listings were created before it", removed, removedHere)
		}
		// The removed listings' idempotency records outlive them.
		e.wantUsage(tenant, 0, 0, removedHere)
		e.check()
	})

	t.Run("GlobalRevocationReachesEveryTenant", func(t *testing.T) {
		e := newEnv(t, f)
		here := e.visible("publisher-1")
		there := e.visibleIn(otherTenant, "publisher-1")
		e.revoke("publisher-1", 2)
		e.wantGet(here.ID, false, engine.NotFound)
		if _, r := e.getIn(otherTenant, there.ID); r.Outcome != engine.NotFound {
			t.Fatalf("global revocation left a listing of another tenant: %v", r.Outcome)
		}
		e.wantRevoked("publisher-1", true, true, true)
	})

	t.Run("SharesTheRevocationPool", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxRevocations = 2 })
		v := e.visible("publisher-2")
		_, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", time.Minute)
		e.want("RevokePrincipal", r, err, engine.Success)
		_, r, err = e.s.RevokeTenantPrincipal(e.ctx, otherTenant, "publisher-2", time.Minute)
		e.want("RevokeTenantPrincipal", r, err, engine.Success)
		e.wantUsed(engine.PoolRevocations, 2)
		e.unchanged("revocation pool full", func() {
			_, r, err := e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-2", time.Minute)
			e.wantShed("RevokeTenantPrincipal in a full pool", r, err, engine.PoolRevocations)
			_, r, err = e.s.RevokePrincipal(e.ctx, "publisher-3", time.Minute)
			e.wantShed("RevokePrincipal in a full pool", r, err, engine.PoolRevocations)
		})
		e.wantGet(v.ID, true, engine.Success)
		// Re-timing an existing one needs no free slot.
		_, r, err = e.s.RevokeTenantPrincipal(e.ctx, otherTenant, "publisher-2", 2*time.Minute)
		e.want("RevokeTenantPrincipal re-timed in a full pool", r, err, engine.Success)
	})

	t.Run("InvalidInputChangesNothing", func(t *testing.T) {
		e := newEnv(t, f)
		e.visible("publisher-1")
		e.unchanged("invalid tenant revocation", func() {
			_, _, err := e.s.RevokeTenantPrincipal(e.ctx, badTenants[0], "publisher-1", time.Minute)
			e.wantInput("RevokeTenantPrincipal with invalid tenant", err, fTenant...)
			_, _, err = e.s.RevokeTenantPrincipal(e.ctx, tenant, badSubjects[0], time.Minute)
			e.wantInput("RevokeTenantPrincipal with invalid subject", err, fSubject...)
			for _, ttl := range []time.Duration{0, time.Second - ns, engine.MaxRevocationTTL + ns} {
				_, _, err = e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-1", ttl)
				e.wantInput("RevokeTenantPrincipal with ttl out of range", err, fTTL...)
			}
			_, err = e.s.RevokedInTenant(e.ctx, badTenants[0], "publisher-1")
			e.wantInput("RevokedInTenant with invalid tenant", err, fTenant...)
			_, err = e.s.RevokedInTenant(e.ctx, tenant, badSubjects[0])
			e.wantInput("RevokedInTenant with invalid subject", err, fSubject...)
		})
		e.s.MarkUnavailable()
		e.unchanged("tenant revocation while unavailable", func() {
			_, r, err := e.s.RevokeTenantPrincipal(e.ctx, tenant, "publisher-1", time.Minute)
			e.want("RevokeTenantPrincipal while unavailable", r, err, engine.ServiceUnavailable)
		})
	})
}

// getIn reads a listing of tenant t (any presence state).
func (e *env) getIn(t engine.Tenant, id engine.ListingID) (engine.ListingView, engine.Result) {
	e.t.Helper()
	v, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: t, Listing: id})
	if err != nil {
		e.t.Fatalf("GetListing: %v", err)
	}
	return v, r
}

// wantRevoked requires Revoked (global) and RevokedInTenant for tenant and
// otherTenant to answer as given.
func (e *env) wantRevoked(s engine.Subject, global, inTenant, inOther bool) {
	e.t.Helper()
	g, err := e.s.Revoked(e.ctx, s)
	if err != nil || g != global {
		e.t.Fatalf("Revoked(%q) = %v %v, want %v", s, g, err, global)
	}
	for _, c := range []struct {
		t    engine.Tenant
		want bool
	}{{tenant, inTenant}, {otherTenant, inOther}} {
		got, err := e.s.RevokedInTenant(e.ctx, c.t, s)
		if err != nil || got != c.want {
			e.t.Fatalf("RevokedInTenant(%v, %q) = %v %v, want %v", c.t, s, got, err, c.want)
		}
	}
}
