package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestEndDrainStartsTheDeploymentAgain: the drain is in the shared state,
// so a store opened after a drain's window (a restarted server) ends it:
// draining is over for every instance, what the window's end erases is gone
// (listings), revocations stay, and new work is taken. Without a drain, or
// with one still in its window (an operator's drain of the deployment),
// EndDrain changes nothing.
func TestEndDrainStartsTheDeploymentAgain(t *testing.T) {
	ctx := context.Background()
	name, k, clock := freshName(), engine.RandomKeyring(), engine.NewManualClock()
	open := func() *redisstore.Store {
		s, err := redisstore.New(ctx, redisstore.Config{Client: redisClient(t), Name: name, Limits: engine.DefaultLimits(), Keyring: k, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	listing := func(key string) engine.CreateListing {
		return engine.CreateListing{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o", IdempotencyKey: key,
			Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: key,
				Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}
	}
	v, r, err := s.CreateListing(ctx, listing("before-drain"))
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	before := s.Snapshot()
	if ended, err := s.EndDrain(ctx); err != nil || ended {
		t.Fatalf("EndDrain without a drain = %v, %v; want false, nil", ended, err)
	}
	if after := s.Snapshot(); after != before {
		t.Fatalf("EndDrain without a drain changed the state:\n%s\nwant\n%s", after, before)
	}

	if _, r, err := s.RevokePrincipal(ctx, "mallory", time.Minute); err != nil || !r.OK() {
		t.Fatalf("RevokePrincipal: %v %v", r.Outcome, err)
	}
	if err := s.BeginDrain(ctx); err != nil || !s.Draining() {
		t.Fatalf("BeginDrain: %v, draining %v", err, s.Draining())
	}
	restarted := open()
	inWindow := restarted.Snapshot()
	if ended, err := restarted.EndDrain(ctx); err != nil || ended || !restarted.Draining() {
		t.Fatalf("EndDrain in the drain window = %v, %v, draining %v; want false, nil, true", ended, err, restarted.Draining())
	}
	if after := restarted.Snapshot(); after != inWindow {
		t.Fatalf("EndDrain in the drain window changed the state:\n%s\nwant\n%s", after, inWindow)
	}
	clock.Advance(engine.DefaultLimits().DrainWindow)
	if ended, err := restarted.EndDrain(ctx); err != nil || !ended {
		t.Fatalf("EndDrain after a drain = %v, %v; want true, nil", ended, err)
	}
	if s.Draining() || restarted.Draining() {
		t.Fatalf("draining after EndDrain: first store %v, restarted %v", s.Draining(), restarted.Draining())
	}
	if _, r, err := restarted.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID}); err != nil || r.Outcome != engine.NotFound {
		t.Fatalf("the drained listing after EndDrain: %v %v, want NotFound", r.Outcome, err)
	}
	if revoked, err := restarted.Revoked(ctx, "mallory"); err != nil || !revoked {
		t.Fatalf("revocation after EndDrain: %v %v, want revoked", revoked, err)
	}
	if _, r, err := restarted.CreateListing(ctx, listing("after-drain")); err != nil || !r.OK() {
		t.Fatalf("CreateListing after EndDrain: %v %v", r.Outcome, err)
	}
	if st := restarted.Stats(); st.Pools[engine.PoolListings-1].Used != 1 || st.Draining {
		t.Fatalf("stats after EndDrain: %+v, want one listing, not draining", st)
	}
	if err := restarted.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if ended, err := restarted.EndDrain(ctx); err != nil || ended {
		t.Fatalf("a second EndDrain = %v, %v; want false, nil", ended, err)
	}
}
