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
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(t), Name: freshName(), Limits: engine.DefaultLimits(), Keyring: k, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	batchAllocsFixed(t, s, k)
}

// batchAllocsFixed checks that s (whose keyring is k) commits a batch of 64
// refreshes with as many allocations as a batch of 8, fewer than one per
// refresh.
func batchAllocsFixed(t *testing.T, s *redisstore.Store, k *engine.Keyring) {
	ctx := context.Background()
	const n = 64
	cmds := make([]engine.CreateListing, n)
	for i := range cmds {
		cmds[i] = engine.CreateListing{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: engine.Subject("owner-" + strconv.Itoa(i%8)),
			IdempotencyKey: "k" + strconv.Itoa(i), Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1",
				DisplayName: "x", Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}
	}
	views, err := s.CreateListingsPipelined(ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
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
	// AllocsPerRun counts every goroutine's allocations, the Redis client's
	// background work included: the least of three runs is the batch's own.
	allocs := func(batch []engine.Op) float64 {
		least := testing.AllocsPerRun(200, func() { refresh(batch) })
		for range 2 {
			least = min(least, testing.AllocsPerRun(200, func() { refresh(batch) }))
		}
		return least
	}
	small, large := allocs(ops[:8]), allocs(ops)
	t.Logf("allocations per batch: %v with 8 refreshes, %v with 64", small, large)
	if raceEnabled {
		return
	}
	if large != small {
		t.Errorf("a batch of 64 refreshes allocates %v times, one of 8 %v: allocations grow with the batch", large, small)
	}
	if large >= n {
		t.Errorf("a batch of %d refreshes allocates %v times: at least one per refresh", n, large)
	}
}
