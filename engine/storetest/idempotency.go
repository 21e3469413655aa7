package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runIdempotency checks the idempotency windows of the reference design
// (docs/contracts/semantics.md#idempotent-creation) for both kinds of creation.
func runIdempotency(t *testing.T, f Factory) {
	t.Run("ListingWindows", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		v := e.create(cmd)
		// A renewal between the original and the replay is visible in the replay.
		rv, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v))
		e.want("RenewLease", r, err, engine.Success)
		var dup engine.ListingView
		e.unchanged("live replay", func() {
			dup, r, err = e.s.CreateListing(e.ctx, cmd)
			e.want("replay", r, err, engine.Success)
		})
		if !r.Replay || dup.ID != v.ID || dup.Lease != v.Lease || dup.Presence != v.Presence || dup.Version != rv.Version {
			t.Fatalf("live replay: replay=%v sameIDs=%v version=%d want %d", r.Replay,
				dup.ID == v.ID && dup.Lease == v.Lease && dup.Presence == v.Presence, dup.Version, rv.Version)
		}
		// Metadata order is canonical in the spec; any other field differs.
		for _, mod := range []func(*engine.ListingSpec){
			func(s *engine.ListingSpec) { s.Region = "us-east" },
			func(s *engine.ListingSpec) { s.ProtocolVersion = 8 },
			func(s *engine.ListingSpec) { s.MaxPlayers = 9 },
			func(s *engine.ListingSpec) { s.Metadata = nil },
			func(s *engine.ListingSpec) { s.Visibility = engine.Unlisted },
		} {
			changed := cmd
			changed.Spec = spec()
			mod(&changed.Spec)
			e.unchanged("changed replay", func() {
				_, r, err := e.s.CreateListing(e.ctx, changed)
				e.want("replay with a different spec", r, err, engine.Conflict)
			})
		}
		r, err = e.s.DeleteListing(e.ctx, e.deleteCmd(rv))
		e.want("DeleteListing", r, err, engine.Success)
		e.unchanged("replay after delete", func() {
			_, r, err = e.s.CreateListing(e.ctx, cmd)
			e.want("replay after the listing is gone", r, err, engine.Expired)
			changed := cmd
			changed.Spec.Region = "us-east"
			_, r, err = e.s.CreateListing(e.ctx, changed)
			e.want("different spec after the listing is gone", r, err, engine.Conflict)
		})
		e.c.Advance(e.l.IdempotencyTTL)
		v2 := e.create(cmd)
		if v2.ID == v.ID {
			t.Fatalf("creation after the record expired reused the old ID")
		}
	})

	// The reference design (docs/contracts/semantics.md#idempotent-creation):
	// no live duplicate. The record of a listing kept alive by renewals far
	// past IdempotencyTTL must still answer a replay with that listing, and
	// must outlive the listing by IdempotencyTTL-LeaseTTL.
	t.Run("RenewalsKeepTheRecordAsLongAsTheListing", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		v := e.create(cmd)
		step := e.l.LeaseTTL / 2
		for elapsed := time.Duration(0); elapsed < 5*e.l.IdempotencyTTL; elapsed += step {
			e.c.Advance(step)
			var r engine.Result
			var err error
			v, r, err = e.s.RenewLease(e.ctx, e.renewCmd(v))
			e.want("RenewLease", r, err, engine.Success)
		}
		var dup engine.ListingView
		var r engine.Result
		var err error
		e.unchanged("replay after renewals", func() {
			dup, r, err = e.s.CreateListing(e.ctx, cmd)
			e.want("replay after renewals", r, err, engine.Success)
		})
		if !r.Replay || dup.ID != v.ID || dup.Lease != v.Lease || dup.Version != v.Version {
			t.Fatalf("replay after %v of renewals: replay=%v same listing=%v: a live duplicate", 5*e.l.IdempotencyTTL, r.Replay, dup.ID == v.ID)
		}
		e.wantUsed(engine.PoolListings, 1)
		// The lease lapses LeaseTTL after the last renewal; the record lasts
		// IdempotencyTTL after it, so a replay in between is Expired, and only
		// after that may the key create again.
		e.c.Advance(e.l.LeaseTTL)
		e.wantGet(v.ID, false, engine.NotFound)
		e.c.Advance(e.l.IdempotencyTTL - e.l.LeaseTTL - time.Nanosecond)
		e.unchanged("replay within the margin", func() {
			_, r, err = e.s.CreateListing(e.ctx, cmd)
			e.want("replay after the listing lapsed", r, err, engine.Expired)
		})
		e.c.Advance(time.Nanosecond)
		if v2 := e.create(cmd); v2.ID == v.ID {
			t.Fatalf("creation after the record expired reused the old ID")
		}
	})

	t.Run("AttemptWindows", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		cmd := e.attemptCmd(v, "client-1")
		a, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("CreateJoinAttempt", r, err, engine.Success)
		e.unchanged("live replay", func() {
			dup, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
			e.want("replay", r, err, engine.Success)
			if !r.Replay || dup.ID != a.ID || dup.Handle != a.Handle {
				t.Fatalf("live attempt replay: replay=%v sameIDs=%v", r.Replay, dup.ID == a.ID && dup.Handle == a.Handle)
			}
		})
		changed := cmd
		changed.ProtocolVersion = 8
		e.unchanged("changed replay", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, changed)
			e.want("attempt replay with a different protocol", r, err, engine.Conflict)
		})
		other := e.visible("publisher-2")
		changed = cmd
		changed.Listing = other.ID
		e.unchanged("changed replay listing", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, changed)
			e.want("attempt replay on another listing", r, err, engine.Conflict)
		})
		e.c.Advance(e.l.AttemptTTL)
		e.unchanged("replay after expiry", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
			e.want("attempt replay after it expired", r, err, engine.Expired)
		})
		e.c.Advance(e.l.IdempotencyTTL - e.l.AttemptTTL)
		// The listing is gone by now (60 s lease): join a new one with the
		// same key, which is free again.
		cmd.Listing = e.visible("publisher-3").ID
		a2, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("attempt after the record expired", r, err, engine.Success)
		if r.Replay || a2.ID == a.ID {
			t.Fatalf("attempt after the record expired: replay=%v sameID=%v", r.Replay, a2.ID == a.ID)
		}
	})

	t.Run("AttemptReplayAfterCascade", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		cmd := e.attemptCmd(v, "client-1")
		e.attemptFrom(cmd)
		r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(v))
		e.want("DeleteListing", r, err, engine.Success)
		_, r, err = e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("attempt replay after its listing was deleted", r, err, engine.Expired)
	})

	t.Run("ScopedByTenantSubjectAndKind", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		cmd.IdempotencyKey = "shared-key"
		v := e.create(cmd)
		// Same key, other subject: a new listing.
		o := cmd
		o.Owner = "publisher-2"
		if v2 := e.create(o); v2.ID == v.ID {
			t.Fatalf("idempotency key not scoped by subject")
		}
		// Same key and subject, other tenant: a new listing.
		o = cmd
		o.Tenant = otherTenant
		if v3 := e.create(o); v3.ID == v.ID {
			t.Fatalf("idempotency key not scoped by tenant")
		}
		// Same key, different spec, other subject: no conflict.
		o = cmd
		o.Owner = "publisher-3"
		o.Spec.Region = "us-east"
		e.create(o)
		// Same key for an attempt by the same subject: its own namespace.
		e.presence(v, 1, pub(1))
		ac := e.attemptCmd(v, "publisher-1")
		ac.IdempotencyKey = "shared-key"
		e.attemptFrom(ac)
		// And by another client with the same key: separate too.
		ac.Client = "client-2"
		e.attemptFrom(ac)
		e.wantUsed(engine.PoolIdempotency, 6)
	})
}

// attemptFrom creates the attempt cmd describes and requires a fresh Success.
func (e *env) attemptFrom(cmd engine.CreateAttempt) engine.AttemptView {
	e.t.Helper()
	a, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
	e.wantFresh("CreateJoinAttempt", r, err)
	return a
}
