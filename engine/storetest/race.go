package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// racers is how many goroutines contend in each race.
const racers = 32

// race runs fn(i) on racers goroutines released together.
func race(fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			fn(i)
		}()
	}
	close(start)
	wg.Wait()
}

// tally counts outcomes; it fails on errors.
func tally(t *testing.T, rs []engine.Result, errs []error) map[engine.Outcome]int {
	t.Helper()
	m := map[engine.Outcome]int{}
	for i, r := range rs {
		if errs[i] != nil {
			t.Fatalf("racer %d: error %v", i, errs[i])
		}
		m[r.Outcome]++
	}
	return m
}

// runRace runs the concurrency cases: quotas and pools under concurrent
// creators admit exactly their limit; CAS, binds, introductions and replay
// tickets admit exactly one winner; renew/delete serialise.
func runRace(t *testing.T, f Factory) {
	t.Run("TenantStarvation", func(t *testing.T) { runTenantStarvation(t, f) })
	t.Run("FairShares3", func(t *testing.T) { runFairShares(t, f, 3) })
	t.Run("FairShares10", func(t *testing.T) { runFairShares(t, f, 10) })
	t.Run("OwnerQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.OwnerListingQuota = 5 })
		cmds := make([]engine.CreateListing, racers)
		for i := range cmds {
			cmds[i] = e.listingCmd("publisher-1")
		}
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) { _, rs[i], errs[i] = e.s.CreateListing(e.ctx, cmds[i]) })
		m := tally(t, rs, errs)
		if m[engine.Success] != 5 || m[engine.CapacityExceeded] != racers-5 {
			t.Fatalf("owner quota 5 under %d creators: %v", racers, m)
		}
		for _, r := range rs {
			if !r.OK() && r.Pool != engine.QuotaOwnerListings {
				t.Fatalf("shed with pool %v", r.Pool)
			}
		}
		e.wantUsed(engine.PoolListings, 5)
		e.check()
	})

	t.Run("ListingsPool", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.MaxListings = 7 }, wholePools)
		cmds := make([]engine.CreateListing, racers)
		for i := range cmds {
			cmds[i] = e.listingCmd(engine.Subject(fmt.Sprintf("publisher-%d", i)))
		}
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) { _, rs[i], errs[i] = e.s.CreateListing(e.ctx, cmds[i]) })
		if m := tally(t, rs, errs); m[engine.Success] != 7 || m[engine.CapacityExceeded] != racers-7 {
			t.Fatalf("listing pool 7 under %d creators: %v", racers, m)
		}
		e.wantUsed(engine.PoolListings, 7)
		e.wantUsed(engine.PoolIdempotency, 7)
		e.check()
	})

	t.Run("TenantAttemptQuota", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.TenantAttemptQuota = 6 })
		v := e.visible("publisher-1")
		cmds := make([]engine.CreateAttempt, racers)
		for i := range cmds {
			cmds[i] = e.attemptCmd(v, engine.Subject(fmt.Sprintf("client-%d", i)))
		}
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) { _, rs[i], errs[i] = e.s.CreateJoinAttempt(e.ctx, cmds[i]) })
		if m := tally(t, rs, errs); m[engine.Success] != 6 || m[engine.CapacityExceeded] != racers-6 {
			t.Fatalf("tenant attempt quota 6 under %d creators: %v", racers, m)
		}
		e.wantUsed(engine.PoolAttempts, 6)
		e.check()
	})

	t.Run("SameIdempotencyKey", func(t *testing.T) {
		e := newEnv(t, f)
		cmd := e.listingCmd("publisher-1")
		vs := make([]engine.ListingView, racers)
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) { vs[i], rs[i], errs[i] = e.s.CreateListing(e.ctx, cmd) })
		fresh := 0
		for i := range rs {
			if errs[i] != nil || !rs[i].OK() || vs[i].ID != vs[0].ID {
				t.Fatalf("racer %d: %v %v, or a different ID", i, rs[i].Outcome, errs[i])
			}
			if !rs[i].Replay {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%d fresh creations for one idempotency key, want 1", fresh)
		}
		e.wantUsed(engine.PoolListings, 1)
	})

	t.Run("RenewCAS", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		cmd := e.renewCmd(v)
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) { _, rs[i], errs[i] = e.s.RenewLease(e.ctx, cmd) })
		if m := tally(t, rs, errs); m[engine.Success] != 1 || m[engine.Conflict] != racers-1 {
			t.Fatalf("CAS renew race: %v", m)
		}
		if g := e.wantGet(v.ID, false, engine.Success); g.Version != 2 {
			t.Fatalf("version %d after one successful renew", g.Version)
		}
	})

	t.Run("RenewDelete", func(t *testing.T) {
		e := newEnv(t, f)
		for round := 0; round < 16; round++ {
			v := e.visible("publisher-1")
			rs, errs := make([]engine.Result, racers), make([]error, racers)
			race(func(i int) {
				if i == 0 {
					rs[i], errs[i] = e.s.DeleteListing(e.ctx, e.deleteCmd(v))
					return
				}
				c := e.renewCmd(v)
				c.ExpectedVersion = uint64(i) // versions 1..racers-1: a chain may commit
				_, rs[i], errs[i] = e.s.RenewLease(e.ctx, c)
			})
			if errs[0] != nil || !rs[0].OK() {
				t.Fatalf("delete in race: %v %v", rs[0].Outcome, errs[0])
			}
			for i := 1; i < racers; i++ {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				switch rs[i].Outcome {
				case engine.Success, engine.NotFound, engine.Conflict:
				default:
					t.Fatalf("renew in race: %v", rs[i].Outcome)
				}
			}
			e.wantGet(v.ID, false, engine.NotFound)
			e.check()
		}
		e.wantUsed(engine.PoolListings, 0)
	})

	t.Run("BindConsumeReplay", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		rs, errs := make([]engine.Result, racers), make([]error, racers)
		race(func(i int) {
			_, rs[i], errs[i] = e.s.BindAttemptEndpoint(e.ctx, e.bindCmd(a, engine.RoleHost, pub(uint16(1000+i)), netipZero))
		})
		if m := tally(t, rs, errs); m[engine.Success] != 1 || m[engine.ReplayRejected] != racers-1 {
			t.Fatalf("host bind race: %v", m)
		}
		e.bind(e.bindCmd(a, engine.RoleClient, pub(2), netipZero))
		race(func(i int) { _, rs[i], errs[i] = e.s.ConsumeIntroduction(e.ctx, a.Handle) })
		if m := tally(t, rs, errs); m[engine.Success] != 1 || m[engine.ReplayRejected] != racers-1 {
			t.Fatalf("consume race: %v", m)
		}
		race(func(i int) { rs[i], errs[i] = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"}) })
		if m := tally(t, rs, errs); m[engine.Success] != 1 || m[engine.ReplayRejected] != racers-1 {
			t.Fatalf("replay ticket race: %v", m)
		}
		// Batched binds racing: one FirstIntro overall.
		b := e.attempt(v, "client-2")
		host := e.bindCmd(b, engine.RoleHost, pub(1), netipZero)
		client := e.bindCmd(b, engine.RoleClient, pub(2), netipZero)
		firsts := make([]int, racers)
		race(func(i int) {
			ops := []engine.Op{{Kind: engine.OpBindAttempt, Bind: host}, {Kind: engine.OpBindAttempt, Bind: client}}
			errs[i] = e.s.ApplyBatch(e.ctx, ops)
			for _, op := range ops {
				if op.FirstIntro {
					firsts[i]++
				}
				if !op.Result.OK() {
					rs[i] = op.Result
				}
			}
		})
		total := 0
		for i := range firsts {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			total += firsts[i]
		}
		if total != 1 {
			t.Fatalf("FirstIntro set %d times across racing batches, want 1", total)
		}
		e.check()
	})

	t.Run("MixedLoad", func(t *testing.T) {
		// Everything at once for the race detector; invariants after.
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		race(func(i int) {
			for j := 0; j < 20; j++ {
				switch (i + j) % 6 {
				case 0:
					c := engine.CreateListing{Tenant: tenant, Owner: engine.Subject(fmt.Sprintf("p-%d", i)),
						IdempotencyKey: fmt.Sprintf("k-%d-%d", i, j), Spec: spec()}
					e.s.CreateListing(e.ctx, c)
				case 1:
					e.s.BindHostPresence(e.ctx, e.presenceCmd(v, uint64(i*100+j+2), pub(uint16(i))))
				case 2:
					e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10}, nil)
				case 3:
					c := engine.CreateAttempt{Tenant: tenant, Client: "c", IdempotencyKey: fmt.Sprintf("a-%d-%d", i, j), Listing: v.ID, ProtocolVersion: 7}
					if a, r, _ := e.s.CreateJoinAttempt(e.ctx, c); r.OK() {
						e.s.BindAttemptEndpoint(e.ctx, e.bindCmd(a, engine.RoleClient, pub(1), netipZero))
					}
				case 4:
					e.s.Stats()
					e.s.AttemptHost(v.Presence)
				case 5:
					e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: fmt.Sprint(i, j), Lifetime: time.Second})
				}
			}
		})
		e.check()
	})
}
