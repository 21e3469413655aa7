package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runRevocation covers RevokeListing (tenant scoping, cascade) and
// RevokePrincipal (cascade, count, blocking new work).
func runRevocation(t *testing.T, f Factory) {
	t.Run("RevokeListingScopingAndCascade", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		w := e.visible("publisher-1")
		b := e.attempt(w, "client-1")
		e.unchanged("revoke from another tenant", func() {
			r, err := e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: otherTenant, Listing: v.ID})
			e.want("RevokeListing from another tenant", r, err, engine.NotFound)
			r, err = e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: tenant, Listing: engine.ListingID{UUID: engine.NewUUID()}})
			e.want("RevokeListing of an unknown listing", r, err, engine.NotFound)
		})
		r, err := e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: tenant, Listing: v.ID})
		e.want("RevokeListing", r, err, engine.Success)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantAttempt(a.Handle, false, "revoked listing's attempt survives")
		_, r, err = e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 2, pub(1)))
		e.want("presence of a revoked listing", r, err, engine.NotFound)
		// The owner is not revoked by a listing revocation.
		if ok, _ := e.s.Revoked(e.ctx, "publisher-1"); ok {
			t.Fatalf("RevokeListing revoked the owner")
		}
		// A global operator reaches any tenant.
		r, err = e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: otherTenant, AnyTenant: true, Listing: w.ID})
		e.want("RevokeListing AnyTenant", r, err, engine.Success)
		e.wantAttempt(b.Handle, false, "AnyTenant revocation left the attempt")
		for _, p := range []engine.Pool{engine.PoolListings, engine.PoolPresence, engine.PoolAttempts} {
			e.wantUsed(p, 0)
		}
	})

	t.Run("RevokePrincipalCascadeAndCount", func(t *testing.T) {
		e := newEnv(t, f)
		v1 := e.visible("publisher-1")
		v2 := e.visible("publisher-1")
		other := e.visible("publisher-2")
		onOwn := e.attempt(v1, "client-9")       // cascades with v1, not counted
		byPub := e.attempt(other, "publisher-1") // created by the subject: counted
		kept := e.attempt(other, "client-9")
		e.revoke("publisher-1", 3) // two listings, one attempt it created
		e.wantCascade("revocation", []engine.ListingID{v1.ID, v2.ID}, []engine.Handle{onOwn.Handle, byPub.Handle}, other.ID, kept.Handle)
		if ok, err := e.s.Revoked(e.ctx, "publisher-1"); err != nil || !ok {
			t.Fatalf("Revoked = %v %v", ok, err)
		}
		if ok, _ := e.s.Revoked(e.ctx, "publisher-2"); ok {
			t.Fatalf("an unrelated subject is revoked")
		}
		e.unchanged("revoked subject", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
			e.want("CreateListing by a revoked subject", r, err, engine.Revoked)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(other, "publisher-1"))
			e.want("CreateJoinAttempt by a revoked subject", r, err, engine.Revoked)
		})
		// Revoking a subject with nothing: Success, 0 removed.
		n, r, err := e.s.RevokePrincipal(e.ctx, "nobody", time.Second)
		e.want("RevokePrincipal of an idle subject", r, err, engine.Success)
		if n != 0 {
			t.Fatalf("idle subject: removed %d", n)
		}
		e.wantUsed(engine.PoolRevocations, 2)
		e.check()
	})

	// A renewal checks revocation like new work (after ServiceUnavailable
	// and Draining, before NotFound): the server's single call for a
	// renewal decides it, so a revoked owner's renewal is Revoked, whatever
	// the listing it names, and changes nothing.
	t.Run("RenewalByARevokedOwnerIsRevoked", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		other := e.visible("publisher-2")
		_, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", time.Minute)
		e.want("RevokePrincipal", r, err, engine.Success)
		stranger := e.renewCmd(other)
		stranger.Owner = "publisher-1"
		unknown := e.renewCmd(v)
		unknown.Listing = engine.ListingID{UUID: engine.NewUUID()}
		e.unchanged("renewals by a revoked owner", func() {
			for _, c := range []struct {
				name string
				cmd  engine.RenewLease
			}{{"its own (removed) listing", e.renewCmd(v)}, {"another owner's listing", stranger}, {"an unknown listing", unknown}} {
				_, r, err := e.s.RenewLease(e.ctx, c.cmd)
				e.want("RenewLease by a revoked owner of "+c.name, r, err, engine.Revoked)
			}
		})
		if err := e.s.BeginDrain(e.ctx); err != nil {
			t.Fatalf("BeginDrain: %v", err)
		}
		e.unchanged("renewal by a revoked owner while draining", func() {
			_, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v))
			e.want("RenewLease by a revoked owner while draining", r, err, engine.Draining)
		})
	})

	t.Run("RevokedReplayIsRevoked", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		e.create(cmd)
		_, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", time.Minute)
		e.want("RevokePrincipal", r, err, engine.Success)
		e.unchanged("replay by revoked subject", func() {
			_, r, err := e.s.CreateListing(e.ctx, cmd)
			e.want("replay by a revoked subject", r, err, engine.Revoked)
		})
	})
}
