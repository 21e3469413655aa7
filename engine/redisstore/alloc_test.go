package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestApplyBatchAllocatesPerBatchNotPerOp guards the UDP hot path on our
// side of the client: a batch of presence refreshes allocates a fixed
// number of times (the client's command and reply, the call's deadline),
// however many refreshes it carries, so a batch of 64 allocates exactly as
// much as a batch of 8.
func TestApplyBatchAllocatesPerBatchNotPerOp(t *testing.T) {
	s, k := allocStore(t)
	batchAllocsFixed(t, s, k)
}

// batchAllocsFixed checks that s (whose keyring is k) commits a batch of 64
// refreshes with as many allocations as a batch of 8, fewer than one per
// refresh.
func batchAllocsFixed(t *testing.T, s *redisstore.Store, k *engine.Keyring) {
	ctx := context.Background()
	const n = 64
	views := allocListings(t, s, n)
	ops := make([]engine.Op, n)
	for i, v := range views {
		pc := k.Presence(v.Presence)
		ops[i] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc),
			Public: netipAP("203.0.113.10:4000"), Local: netipAP("[fd00::1]:4000")}}
	}
	seq := uint64(0)
	refresh := func(batch []engine.Op) {
		seq++
		for i := range batch {
			batch[i].Presence.Seq = seq
		}
		if err := s.ApplyBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			if !batch[i].Result.OK() || batch[i].PresenceView.Listing != views[i].ID {
				t.Fatalf("refresh %d: %v, listing %v", i, batch[i].Result.Outcome, batch[i].PresenceView.Listing)
			}
		}
	}
	refresh(ops) // every presence fresh, buffers grown
	small, large := leastAllocs(func() { refresh(ops[:8]) }), leastAllocs(func() { refresh(ops) })
	t.Logf("allocations per batch: %v with 8 refreshes, %v with 64", small, large)
	checkPerBatch(t, "refreshes", small, large, n)
}

// TestApplyBatchBindsAllocatePerBatchNotPerOp is the same guard for
// attempt binds, answered with the attempt's view and its introduction:
// a batch of 64 binds allocates as much as one of 8.
func TestApplyBatchBindsAllocatePerBatchNotPerOp(t *testing.T) {
	const n = 64 // binds: a host and a client bind of 32 attempts
	s, k := allocStore(t)
	views := allocListings(t, s, n/2)
	ctx := context.Background()
	presence := make([]engine.Op, len(views))
	for i, v := range views {
		pc := k.Presence(v.Presence)
		presence[i] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc),
			Seq: 1, Public: netipAP("203.0.113.10:4000")}}
	}
	if err := s.ApplyBatch(ctx, presence); err != nil {
		t.Fatal(err)
	}
	ops := make([]engine.Op, 0, n)
	for i, v := range views {
		a, r, err := s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: engine.Subject("client-" + strconv.Itoa(i)),
			IdempotencyKey: "join-" + strconv.Itoa(i), Listing: v.ID, ProtocolVersion: v.Spec.ProtocolVersion})
		if err != nil || !r.OK() {
			t.Fatalf("CreateJoinAttempt %d: %v %v", i, r.Outcome, err)
		}
		pc, cc := k.Presence(v.Presence), k.AttemptClient(a.Handle)
		hc := engine.HostAttemptCapability(&pc, a.Handle)
		ops = append(ops,
			engine.Op{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: a.Handle, Role: engine.RoleHost,
				Key: engine.FingerprintOf(&hc), Public: netipAP("203.0.113.10:4000"), Local: netipAP("[fd00::1]:4000")}},
			engine.Op{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: a.Handle, Role: engine.RoleClient,
				Key: engine.FingerprintOf(&cc), Public: netipAP("198.51.100.7:5000")}})
	}
	bind := func(batch []engine.Op) {
		if err := s.ApplyBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for i := range batch {
			op := &batch[i]
			if !op.Result.OK() || op.Attempt.Handle != op.Bind.Handle || !op.IntroReady || op.Intro.Handle != op.Bind.Handle {
				t.Fatalf("bind %d: %v, view of %v, introduction ready %v of %v", i, op.Result.Outcome, op.Attempt.Handle, op.IntroReady, op.Intro.Handle)
			}
		}
	}
	// The first batch binds both endpoints of every attempt in order, so
	// the host binds (before their client's) find no introduction yet;
	// from then on every bind is a replay answered with the introduction.
	if err := s.ApplyBatch(ctx, ops); err != nil {
		t.Fatal(err)
	}
	bind(ops)
	small, large := leastAllocs(func() { bind(ops[:8]) }), leastAllocs(func() { bind(ops) })
	t.Logf("allocations per batch: %v with 8 binds, %v with 64", small, large)
	checkPerBatch(t, "binds", small, large, n)
}

// allocStore is a store of its own on the package's server, and its
// keyring.
func allocStore(t *testing.T) (*redisstore.Store, *engine.Keyring) {
	t.Helper()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(t), Name: freshName(), Limits: engine.DefaultLimits(), Keyring: k, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s, k
}

// allocListings creates n listings on s.
func allocListings(t *testing.T, s *redisstore.Store, n int) []engine.ListingView {
	t.Helper()
	cmds := make([]engine.CreateListing, n)
	for i := range cmds {
		cmds[i] = engine.CreateListing{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: engine.Subject("owner-" + strconv.Itoa(i%8)),
			IdempotencyKey: "k" + strconv.Itoa(i), Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1",
				DisplayName: "x", Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}
	}
	views, err := s.CreateListingsPipelined(context.Background(), cmds)
	if err != nil {
		t.Fatal(err)
	}
	return views
}

// leastAllocs is the least of three AllocsPerRun measurements of fn:
// AllocsPerRun counts every goroutine's allocations, the Redis client's
// background work included, and the least is the batch's own.
func leastAllocs(fn func()) float64 {
	least := testing.AllocsPerRun(200, fn)
	for range 2 {
		least = min(least, testing.AllocsPerRun(200, fn))
	}
	return least
}

// checkPerBatch fails when a batch of n ops allocates more than one of 8,
// or at least once per op.
func checkPerBatch(t *testing.T, what string, small, large float64, n int) {
	t.Helper()
	if raceEnabled {
		return
	}
	if large != small {
		t.Errorf("a batch of %d %s allocates %v times, one of 8 %v: allocations grow with the batch", n, what, large, small)
	}
	if large >= float64(n) {
		t.Errorf("a batch of %d %s allocates %v times: at least one per op", n, what, large)
	}
}
