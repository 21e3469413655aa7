package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runReference ports every test of the reference store
// (InMemoryEphemeralRendezvousStoreTests.cs), one subtest each, same names.
func runReference(t *testing.T, f Factory) {
	t.Run("DuplicateRegistrationIsIdempotentButChangedRequestConflicts", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		first := e.create(cmd)
		dup, r, err := e.s.CreateListing(e.ctx, cmd)
		e.want("duplicate CreateListing", r, err, engine.Success)
		if !r.Replay || dup.ID != first.ID || dup.Lease != first.Lease || dup.Presence != first.Presence {
			t.Fatalf("duplicate: replay=%v, same IDs=%v", r.Replay, dup.ID == first.ID && dup.Lease == first.Lease && dup.Presence == first.Presence)
		}
		changed := cmd
		changed.Spec.DisplayName = "different"
		e.unchanged("changed duplicate", func() {
			_, r, err = e.s.CreateListing(e.ctx, changed)
			e.want("changed CreateListing", r, err, engine.Conflict)
		})
	})

	t.Run("LeaseAndPresenceExpiryUseMonotonicTime", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.c.Advance(20 * time.Second)
		e.wantGet(v.ID, true, engine.NotFound)
		e.wantGet(v.ID, false, engine.Success)
		e.c.Advance(40 * time.Second)
		e.wantGet(v.ID, false, engine.NotFound)
	})

	t.Run("WallClockMovementDoesNotExpireOrExtendLease", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		// The informational wall time comes from the monotonic clock: one
		// second after the creation plus the lease, whatever the wall did.
		want := e.c.Wall().Add(time.Second + e.l.LeaseTTL)
		e.c.MoveWall(30 * 24 * time.Hour)
		e.wantGet(v.ID, false, engine.Success)
		e.c.Advance(time.Second)
		rv, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v))
		e.want("RenewLease", r, err, engine.Success)
		if rv.LeaseTTL != 60*time.Second {
			t.Fatalf("renewed LeaseTTL = %v, want 60s", rv.LeaseTTL)
		}
		if !rv.LeaseExpiresAt.Equal(want) {
			t.Fatalf("renewed lease_expires_at = %v, want %v (the wall clock moved 30 days)", rv.LeaseExpiresAt, want)
		}
		e.c.MoveWall(-60 * 24 * time.Hour)
		if gv := e.wantGet(v.ID, false, engine.Success); !gv.LeaseExpiresAt.Equal(want) {
			t.Fatalf("lease_expires_at after the wall moved back = %v, want %v", gv.LeaseExpiresAt, want)
		}
		e.c.Advance(59 * time.Second)
		e.wantGet(v.ID, false, engine.Success)
		e.c.Advance(time.Second)
		e.wantGet(v.ID, false, engine.NotFound)
	})

	t.Run("RenewDeleteRaceIsAtomicAndDeleteAlwaysWinsEventually", func(t *testing.T) {
		for i := 0; i < 20; i++ {
			e := newEnv(t, f)
			v := e.visible("publisher-1")
			var wg sync.WaitGroup
			start := make(chan struct{})
			var renewR, deleteR engine.Result
			var renewErr, deleteErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, renewR, renewErr = e.s.RenewLease(e.ctx, e.renewCmd(v))
			}()
			go func() {
				defer wg.Done()
				<-start
				deleteR, deleteErr = e.s.DeleteListing(e.ctx, e.deleteCmd(v))
			}()
			close(start)
			wg.Wait()
			e.want("DeleteListing", deleteR, deleteErr, engine.Success)
			if renewErr != nil || (renewR.Outcome != engine.Success && renewR.Outcome != engine.NotFound) {
				t.Fatalf("racing RenewLease = %v, %v; want Success or NotFound", renewR.Outcome, renewErr)
			}
			e.wantGet(v.ID, false, engine.NotFound)
			e.check()
		}
	})

	t.Run("CompareAndSwapPreventsStaleRenewal", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		cmd := e.renewCmd(v)
		first, r, err := e.s.RenewLease(e.ctx, cmd)
		e.want("RenewLease", r, err, engine.Success)
		if first.Version != 2 {
			t.Fatalf("renewed version = %d, want 2", first.Version)
		}
		e.unchanged("stale renew", func() {
			stale, r, err := e.s.RenewLease(e.ctx, cmd)
			e.want("stale RenewLease", r, err, engine.Conflict)
			if stale.Version != 2 {
				t.Fatalf("stale renew reports current version %d, want 2", stale.Version)
			}
		})
	})

	t.Run("JoinRequiresExactScopeProtocolAndFreshHostPresence", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.create(e.listingCmd("publisher-1"))
		cmd := e.attemptCmd(v, "client-1")
		e.unchanged("join without presence", func() {
			_, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
			e.want("CreateJoinAttempt without presence", r, err, engine.NotFound)
		})
		e.presence(v, 1, pub(40000))
		for _, mod := range []func(*engine.CreateAttempt){
			func(c *engine.CreateAttempt) { c.ProtocolVersion = 8 },
			func(c *engine.CreateAttempt) { c.Tenant = otherTenant },
			func(c *engine.CreateAttempt) { c.Tenant = engine.Tenant{Game: "space-game", Env: "prod"} },
		} {
			bad := e.attemptCmd(v, "client-1")
			mod(&bad)
			e.unchanged("mismatched join", func() {
				_, r, err := e.s.CreateJoinAttempt(e.ctx, bad)
				e.want("mismatched CreateJoinAttempt", r, err, engine.NotFound)
			})
		}
		_, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("CreateJoinAttempt", r, err, engine.Success)
	})

	t.Run("DuplicateJoinIsIdempotentAndDoesNotAllocateTwice", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		cmd := e.attemptCmd(v, "client-1")
		first, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.want("CreateJoinAttempt", r, err, engine.Success)
		var dup engine.AttemptView
		e.unchanged("duplicate join", func() {
			dup, r, err = e.s.CreateJoinAttempt(e.ctx, cmd)
			e.want("duplicate CreateJoinAttempt", r, err, engine.Success)
		})
		if !r.Replay || dup.ID != first.ID || dup.Handle != first.Handle {
			t.Fatalf("duplicate join: replay=%v sameID=%v sameHandle=%v", r.Replay, dup.ID == first.ID, dup.Handle == first.Handle)
		}
		e.wantUsed(engine.PoolAttempts, 1)
		e.wantUsed(engine.PoolIdempotency, 2)
	})

	t.Run("BrowseReturnsOnlyFreshPublicCompatibleListingsInStableOrder", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.create(e.listingCmd("publisher-1")) // no presence
		unlisted := e.listingCmd("publisher-1")
		unlisted.Spec.Visibility = engine.Unlisted
		u := e.create(unlisted)
		e.presence(u, 1, pub(40099))
		items, more, r, err := e.s.BrowseVisible(e.ctx, engine.Browse{
			Tenant: tenant, ProtocolVersion: 7, Region: "eu-central", Limit: engine.BrowsePageMax}, nil)
		e.want("BrowseVisible", r, err, engine.Success)
		if len(items) != 1 || items[0].ID != v.ID || more {
			t.Fatalf("browse = %d items (more=%v), want exactly the visible listing", len(items), more)
		}
	})

	t.Run("ConcurrentEndpointBindingAcceptsOneCompleteEndpointOnly", func(t *testing.T) {
		for i := 0; i < 20; i++ {
			e := newEnv(t, f)
			v := e.visible("publisher-1")
			a := e.attempt(v, "client-1")
			first := e.bindCmd(a, engine.RoleClient, pub(40001), lan(40001))
			second := e.bindCmd(a, engine.RoleClient, otherPub(50001), netipZero)
			res := make([]engine.Result, 2)
			errs := make([]error, 2)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for j, cmd := range []engine.BindAttempt{first, second} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					_, res[j], errs[j] = e.s.BindAttemptEndpoint(e.ctx, cmd)
				}()
			}
			close(start)
			wg.Wait()
			ok, rejected := 0, 0
			for j := range res {
				if errs[j] != nil {
					t.Fatalf("bind error %v", errs[j])
				}
				switch res[j].Outcome {
				case engine.Success:
					ok++
				case engine.ReplayRejected:
					rejected++
				}
			}
			if ok != 1 || rejected != 1 {
				t.Fatalf("concurrent binds: %d Success, %d ReplayRejected; want 1 and 1", ok, rejected)
			}
			// The winner's endpoint is whole: public and local from one command.
			winner := first
			if res[1].OK() {
				winner = second
			}
			got, r := e.bind(winner)
			if !r.OK() || !r.Replay || got.Peer.Public != winner.Public || got.Peer.Local != winner.Local {
				t.Fatalf("winner re-bind = %v replay=%v; peer endpoint not the winner's", r.Outcome, r.Replay)
			}
		}
	})

	t.Run("AttemptCapabilitiesAndIntroductionAreOneTime", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		host := e.bindCmd(a, engine.RoleHost, pub(40010), netipZero)
		client := e.bindCmd(a, engine.RoleClient, otherPub(40020), netipZero)
		if _, r := e.bind(host); !r.OK() || r.Replay {
			t.Fatalf("host bind = %v replay=%v", r.Outcome, r.Replay)
		}
		if _, r := e.bind(client); !r.OK() || r.Replay {
			t.Fatalf("client bind = %v replay=%v", r.Outcome, r.Replay)
		}
		if _, r := e.bind(client); !r.OK() || !r.Replay {
			t.Fatalf("identical client bind = %v replay=%v, want idempotent Success", r.Outcome, r.Replay)
		}
		in, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction", r, err, engine.Success)
		if in.Host.Public != host.Public || in.Client.Public != client.Public || in.Attempt != a.ID {
			t.Fatalf("introduction endpoints are not the bound ones")
		}
		e.unchanged("second consume", func() {
			_, r, err = e.s.ConsumeIntroduction(e.ctx, a.Handle)
			e.want("second ConsumeIntroduction", r, err, engine.ReplayRejected)
		})
		moved := client
		moved.Public = otherPub(40021)
		e.unchanged("different client bind", func() {
			e.wantBind(moved, engine.ReplayRejected, "different client bind after consumption")
		})
	})

	t.Run("ExpiredAttemptCannotBeObservedBoundOrConsumed", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		e.c.Advance(30 * time.Second)
		e.wantBind(e.bindCmd(a, engine.RoleClient, pub(40050), netipZero), engine.NotFound, "bind of expired attempt")
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction of expired attempt", r, err, engine.NotFound)
		e.wantAttempt(a.Handle, false, "AttemptHost finds an expired attempt")
	})

	t.Run("GenericReplayConsumptionIsBoundedAndExpires", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxReplay = 1 })
		r, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "ticket", Key: "one"})
		e.want("ConsumeReplay", r, err, engine.Success)
		e.unchanged("replayed ticket", func() {
			r, err = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "ticket", Key: "one"})
			e.want("ConsumeReplay again", r, err, engine.ReplayRejected)
		})
		e.unchanged("replay pool full", func() {
			r, err = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "ticket", Key: "two"})
			e.wantShed("ConsumeReplay over ceiling", r, err, engine.PoolReplay)
		})
		e.c.Advance(e.l.ReplayTTL)
		r, err = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "ticket", Key: "two"})
		e.want("ConsumeReplay after expiry", r, err, engine.Success)
	})

	t.Run("PresenceAttemptAndRevocationPoolsShedWithoutPartialMutation", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxPresence, l.MaxAttempts, l.MaxRevocations = 1, 1, 1 }, wholePools)
		first := e.visible("publisher-1")
		second := e.create(e.listingCmd("publisher-2"))
		e.unchanged("presence over ceiling", func() {
			_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(second, 1, otherPub(42000)))
			e.wantShed("BindHostPresence", r, err, engine.PoolPresence)
		})
		e.attempt(first, "client-1")
		e.shedAttempt("attempt over ceiling", e.attemptCmd(first, "client-2"), engine.PoolAttempts)
		_, r, err := e.s.RevokePrincipal(e.ctx, "unrelated", time.Minute)
		e.want("RevokePrincipal", r, err, engine.Success)
		e.unchanged("revocation over ceiling", func() {
			n, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", time.Minute)
			e.wantShed("RevokePrincipal", r, err, engine.PoolRevocations)
			if n != 0 {
				t.Fatalf("shed RevokePrincipal reports %d removed", n)
			}
		})
		e.wantGet(first.ID, true, engine.Success)
		e.wantGet(second.ID, false, engine.Success)
	})

	t.Run("ExhaustionShedsNewListingWithoutMutatingExistingState", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxListings = 1 }, wholePools)
		first := e.create(e.listingCmd("publisher-1"))
		e.shedListing("listing over ceiling", e.listingCmd("publisher-1"), engine.PoolListings)
		e.wantGet(first.ID, false, engine.Success)
	})

	t.Run("IdempotencyPoolExhaustionDoesNotCreateUntrackedResource", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxListings, l.MaxIdempotency = 2, 1 }, wholePools)
		first := e.create(e.listingCmd("publisher-1"))
		e.shedListing("idempotency over ceiling", e.listingCmd("publisher-1"), engine.PoolIdempotency)
		e.wantGet(first.ID, false, engine.Success)
		e.wantUsed(engine.PoolListings, 1)
	})

	t.Run("PolicyQuotasAreCheckedInsideAtomicCreation", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.OwnerListingQuota, l.TenantAttemptQuota = 1, 1 })
		first := e.create(e.listingCmd("publisher-quota"))
		e.shedListing("owner quota", e.listingCmd("publisher-quota"), engine.QuotaOwnerListings)
		e.presence(first, 1, pub(42100))
		e.attempt(first, "client-1")
		e.shedAttempt("tenant attempt quota", e.attemptCmd(first, "client-quota-2"), engine.QuotaTenantAttempts)
	})

	t.Run("InvalidDefaultSecurityValuesCannotEnterStore", func(t *testing.T) {
		// The Go store derives every fingerprint itself, so the nearest
		// port is: a zero or wrong fingerprint never authorizes anything.
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		e.unchanged("zero fingerprints", func() {
			rc := e.renewCmd(v)
			rc.LeaseKey = engine.Fingerprint{}
			_, r, err := e.s.RenewLease(e.ctx, rc)
			e.want("RenewLease with zero key", r, err, engine.NotFound)
			dc := e.deleteCmd(v)
			dc.LeaseKey = engine.Fingerprint{}
			r, err = e.s.DeleteListing(e.ctx, dc)
			e.want("DeleteListing with zero key", r, err, engine.NotFound)
			pc := e.presenceCmd(v, 2, pub(40000))
			pc.Key = engine.Fingerprint{}
			_, r, err = e.s.BindHostPresence(e.ctx, pc)
			e.want("BindHostPresence with zero key", r, err, engine.NotFound)
			for _, role := range []engine.Role{engine.RoleHost, engine.RoleClient} {
				bc := e.bindCmd(a, role, pub(40000), netipZero)
				bc.Key = engine.Fingerprint{}
				e.wantBind(bc, engine.NotFound, "bind with zero key")
			}
		})
	})

	t.Run("RevocationRemovesEveryPathAndBlocksNewWorkAtomically", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "publisher-1")
		e.revoke("publisher-1", 2) // its listing and its attempt
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantBind(e.bindCmd(a, engine.RoleClient, pub(40030), netipZero), engine.NotFound, "bind after revocation")
		e.unchanged("revoked creation", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
			e.want("CreateListing by revoked subject", r, err, engine.Revoked)
		})
	})

	t.Run("RestartHasNewGenerationAndNoEphemeralState", func(t *testing.T) {
		before := newEnv(t, f)
		v := before.visible("publisher-1")
		after := newEnv(t, f)
		if before.s.InstanceID() == after.s.InstanceID() || after.s.InstanceID().IsZero() {
			t.Fatalf("restarted store kept instance ID (or has a zero one)")
		}
		after.wantGet(v.ID, false, engine.NotFound)
		for p := engine.PoolListings; p <= engine.PoolIdempotency; p++ {
			after.wantUsed(p, 0)
		}
	})

	t.Run("DrainRejectsNewWorkAllowsInflightCompletionThenClearsState", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.DrainWindow = 5 * time.Second })
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		if err := e.s.BeginDrain(e.ctx); err != nil {
			t.Fatalf("BeginDrain: %v", err)
		}
		e.unchanged("drain rejects", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-1"))
			e.want("CreateListing while draining", r, err, engine.Draining)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-1"))
			e.want("CreateJoinAttempt while draining", r, err, engine.Draining)
		})
		if _, r := e.bind(e.bindCmd(a, engine.RoleClient, pub(41000), netipZero)); !r.OK() {
			t.Fatalf("bind while draining = %v, want Success", r.Outcome)
		}
		e.c.Advance(5 * time.Second)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantBind(e.bindCmd(a, engine.RoleHost, pub(41001), netipZero), engine.NotFound, "bind after drain window")
	})

	t.Run("PrecancelledOperationHasNoPartialEffect", func(t *testing.T) {
		e := newEnv(t, f)
		ctx := canceledCtx()
		e.unchanged("cancelled create", func() {
			_, _, err := e.s.CreateListing(ctx, e.listingCmd("publisher-1"))
			e.wantCanceled("CreateListing", err)
		})
		e.wantUsed(engine.PoolListings, 0)
	})

	t.Run("UnavailableStoreFailsNewAuthorizationClosedAndErasesActiveState", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		e.s.MarkUnavailable()
		e.wantGet(v.ID, false, engine.ServiceUnavailable)
		_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-1"))
		e.want("CreateJoinAttempt when unavailable", r, err, engine.ServiceUnavailable)
	})
}
