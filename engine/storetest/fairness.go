package storetest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/flood"
)

// Tenant starvation: one tenant offering ten times the capacity of the
// listing and attempt pools, from a new principal on every request (so only
// the tenant quotas can stop it), must not push another tenant's in-quota
// creations and joins below full success. The attacker keeps hammering from
// several goroutines while the victim works; the victim starts once the
// attacker holds its whole share, so every victim call meets a saturated
// attacker.
const (
	starvationOverload     = 10
	starvationAttackers    = 8
	starvationVictimLists  = 4
	starvationVictimJoins  = 10
	starvationVictimClient = 5 // joins per victim client, within its quota
)

func starvationLimits(l *engine.Limits) {
	l.MaxListings, l.MaxAttempts, l.MaxIdempotency = 40, 40, 80
	// Each tenant's default share: half of each pool.
	l.TenantListingQuota, l.TenantAttemptQuota, l.TenantIdempotencyQuota = 20, 20, 40
	l.OwnerListingQuota, l.SubjectAttemptQuota, l.SubjectIdempotencyQuota = 10, 10, 10
}

func runTenantStarvation(t *testing.T, f Factory) {
	e := newEnv(t, f, starvationLimits)
	victim := e.visible("victim-publisher")
	ac := e.listingCmd("attacker-publisher")
	ac.Tenant = otherTenant
	target := e.create(ac)
	e.presence(target, 1, otherPub(1))

	// Every command is built before the race (the env is not goroutine-safe).
	offered := starvationOverload * (e.l.MaxListings + e.l.MaxAttempts)
	var attack []func() engine.Result
	for i := 0; i < offered/2; i++ {
		lc := e.listingCmd(engine.Subject(fmt.Sprintf("attacker-publisher-%d", i)))
		lc.Tenant = otherTenant
		jc := e.attemptCmd(target, engine.Subject(fmt.Sprintf("attacker-client-%d", i)))
		attack = append(attack,
			func() engine.Result { _, r, err := e.s.CreateListing(e.ctx, lc); return mustNoErr(t, r, err) },
			func() engine.Result { _, r, err := e.s.CreateJoinAttempt(e.ctx, jc); return mustNoErr(t, r, err) })
	}
	var work []func() engine.Result
	for i := 0; i < starvationVictimLists; i++ {
		lc := e.listingCmd(engine.Subject(fmt.Sprintf("victim-publisher-%d", i)))
		work = append(work, func() engine.Result { _, r, err := e.s.CreateListing(e.ctx, lc); return mustNoErr(t, r, err) })
	}
	for i := 0; i < starvationVictimJoins; i++ {
		jc := e.attemptCmd(victim, engine.Subject(fmt.Sprintf("victim-client-%d", i/starvationVictimClient)))
		work = append(work, func() engine.Result { _, r, err := e.s.CreateJoinAttempt(e.ctx, jc); return mustNoErr(t, r, err) })
	}

	// The attacker's share is full when it holds its listing and attempt
	// quotas (its idempotency share then holds exactly both).
	var admitted, shedQuota, other atomic.Int64
	fl := flood.New()
	fl.Go(starvationAttackers, int64(len(attack)), func(i int64) {
		switch r := attack[i](); {
		case r.OK():
			if admitted.Add(1) == int64(e.l.TenantListingQuota-1+e.l.TenantAttemptQuota) {
				fl.Saturate()
			}
		case r.Quota():
			shedQuota.Add(1)
		default:
			other.Add(1)
		}
	})
	<-fl.Saturated()
	ok := 0
	var failed []engine.Result
	for _, w := range work {
		if r := w(); r.OK() {
			ok++
		} else {
			failed = append(failed, r)
		}
	}
	fl.Wait()

	pct := 100 * float64(ok) / float64(len(work))
	t.Logf("tenant starvation: victim %d/%d in-quota creations and joins succeeded (%.1f%%) while the attacker offered %d (%dx the pools): %d admitted, %d shed by quota",
		ok, len(work), pct, offered, starvationOverload, admitted.Load(), shedQuota.Load())
	if ok != len(work) {
		t.Fatalf("victim tenant starved: %d/%d succeeded (%.1f%%); failures %v", ok, len(work), pct, failed)
	}
	// The attacker got exactly its share, and was shed only by its quotas
	// (429), never by a global pool (503).
	if other.Load() != 0 || admitted.Load() != int64(e.l.TenantListingQuota-1+e.l.TenantAttemptQuota) {
		t.Fatalf("attacker: %d admitted (want its share %d), %d shed other than by quota",
			admitted.Load(), e.l.TenantListingQuota-1+e.l.TenantAttemptQuota, other.Load())
	}
	e.wantUsed(engine.PoolListings, e.l.TenantListingQuota+1+starvationVictimLists)
	e.wantUsed(engine.PoolAttempts, e.l.TenantAttemptQuota+starvationVictimJoins)
	e.check()
}

// mustNoErr fails the test on a transition error and returns r.
func mustNoErr(t *testing.T, r engine.Result, err error) engine.Result {
	if err != nil {
		t.Errorf("transition error: %v", err)
	}
	return r
}
