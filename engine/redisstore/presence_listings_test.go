package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestBatchedRefreshOfDeletedListingIsNotFound: after an accepted refresh
// the store names the listing in later batches (skipping the handle
// lookup); once the listing is deleted, a refresh is NotFound, a wrong key
// is NotFound, and neither changes anything.
func TestBatchedRefreshOfDeletedListingIsNotFound(t *testing.T) {
	ctx := context.Background()
	s, k, v := newOneListingStore(t, engine.DefaultLimits(), nil)
	pc := k.Presence(v.Presence)
	refresh := func(seq uint64, key engine.Fingerprint) engine.Outcome {
		t.Helper()
		ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: key, Seq: seq,
			Public: netipAP("203.0.113.10:4000")}}}
		if err := s.ApplyBatch(ctx, ops); err != nil {
			t.Fatal(err)
		}
		return ops[0].Result.Outcome
	}
	for seq := uint64(1); seq <= 2; seq++ { // the second names the listing
		if o := refresh(seq, engine.FingerprintOf(&pc)); o != engine.Success {
			t.Fatalf("refresh %d: %v", seq, o)
		}
	}
	before := s.Snapshot()
	if o := refresh(3, engine.Fingerprint{1}); o != engine.NotFound {
		t.Fatalf("refresh with a wrong key: %v, want NotFound", o)
	}
	if after := s.Snapshot(); after != before {
		t.Fatalf("a refused refresh changed the state:\n%s\nthen\n%s", before, after)
	}
	lc := k.Lease(v.Lease)
	if r, err := s.DeleteListing(ctx, engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
		LeaseKey: engine.FingerprintOf(&lc)}); err != nil || !r.OK() {
		t.Fatalf("DeleteListing: %v %v", r.Outcome, err)
	}
	before = s.Snapshot()
	if o := refresh(3, engine.FingerprintOf(&pc)); o != engine.NotFound {
		t.Fatalf("refresh of a deleted listing: %v, want NotFound", o)
	}
	if after := s.Snapshot(); after != before {
		t.Fatalf("a refresh of a deleted listing changed the state:\n%s\nthen\n%s", before, after)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// newOneListingStore makes a store under a fresh name holding one listing
// without presence.
func newOneListingStore(t *testing.T, l engine.Limits, clock engine.Clock) (*redisstore.Store, *engine.Keyring, engine.ListingView) {
	t.Helper()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(t), Name: freshName(), Limits: l, Keyring: k, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	views, err := s.CreateListingsPipelined(context.Background(), []engine.CreateListing{{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o",
		IdempotencyKey: "k", Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, k, views[0]
}
