package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestRefreshedPresenceLivesToItsLatestDeadline: a refresh of a fresh
// presence moves the record's deadline only, and its entry in the deadline
// set comes due at the earlier deadline first. Cleanup must then move the
// entry, not end the presence: it ends exactly one PresenceTTL after the
// last refresh, through ApplyBatch and BindHostPresence alike.
func TestRefreshedPresenceLivesToItsLatestDeadline(t *testing.T) {
	for _, batched := range []bool{true, false} {
		ctx := context.Background()
		clock := engine.NewManualClock()
		l := engine.DefaultLimits()
		s, k, v := newOneListingStore(t, l, clock)
		pc := k.Presence(v.Presence)
		refresh := func(seq uint64) {
			t.Helper()
			cmd := engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}
			if r, err := refreshPresence(ctx, s, cmd, batched); err != nil || !r.OK() {
				t.Fatalf("refresh %d (batched %v): %v %v", seq, batched, r.Outcome, err)
			}
		}
		fresh := func() bool {
			t.Helper()
			_, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID, Joinable: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			return r.OK()
		}
		refresh(1)
		clock.Advance(l.PresenceTTL / 2)
		refresh(2)
		clock.Advance(l.PresenceTTL / 2) // the first deadline
		if !fresh() {
			t.Fatalf("batched %v: presence ended at its first deadline, refreshed since", batched)
		}
		clock.Advance(l.PresenceTTL/2 - time.Nanosecond)
		if !fresh() {
			t.Fatalf("batched %v: presence ended before its latest deadline", batched)
		}
		if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != 1 {
			t.Fatalf("batched %v: presence pool %d, want 1", batched, st.Pools[engine.PoolPresence-1].Used)
		}
		clock.Advance(time.Nanosecond)
		if fresh() {
			t.Fatalf("batched %v: presence outlived its latest deadline", batched)
		}
		if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != 0 {
			t.Fatalf("batched %v: presence pool %d after expiry, want 0", batched, st.Pools[engine.PoolPresence-1].Used)
		}
	}
}

// refreshPresence commits one presence refresh through ApplyBatch when
// batched, else through BindHostPresence.
func refreshPresence(ctx context.Context, s *redisstore.Store, cmd engine.BindPresence, batched bool) (engine.Result, error) {
	if !batched {
		_, r, err := s.BindHostPresence(ctx, cmd)
		return r, err
	}
	ops := []engine.Op{{Kind: engine.OpPresence, Presence: cmd}}
	err := s.ApplyBatch(ctx, ops)
	return ops[0].Result, err
}
