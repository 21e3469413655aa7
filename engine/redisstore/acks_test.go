package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// ackTimeout is the longest the setting allows (--redis-ack-timeout 1s):
// a shorter one was missed by a replica that was up, once, with the
// machine busy with other tests.
const ackTimeout = time.Second

// TestAcknowledgedWritesWaitForAReplica: with AckReplicas, a write whose
// replica does not confirm it in time answers NotReplicated (applied on
// the primary, not acknowledged), and the client's idempotent retry once
// the replica is back answers what the first call did: the creation
// replays the same listing, the renewal answers Conflict with the version
// the first one reached, the deletion NotFound; each answer then stands
// on the replica.
func TestAcknowledgedWritesWaitForAReplica(t *testing.T) {
	a, ac := replicaServer(t)
	b, bc := replicaServer(t)
	follow(t, bc, a, ac)
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: ac, Name: "acks", Limits: engine.DefaultLimits(),
		Keyring: k, AckReplicas: 1, AckTimeout: ackTimeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := engine.CreateListing{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "publisher", IdempotencyKey: "listing",
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4}}
	v, r, err := s.CreateListing(ctx, create)
	if err != nil || !r.OK() || r.Replay {
		t.Fatalf("CreateListing with its replica up: %+v %v", r, err)
	}
	onReplica := func(what string) {
		t.Helper()
		n, err := bc.Do(ctx, bc.B().Exists().Key("rdv:{acks}:l:"+v.ID.UUID.String()).Build()).AsInt64()
		if err != nil || n != 1 {
			t.Fatalf("after %s, the replica holds the listing: %d %v", what, n, err)
		}
	}
	onReplica("an acknowledged creation")

	paused := func(what string, fn func() engine.Result) {
		t.Helper()
		if err := b.Pause(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		r := fn()
		if err := b.Resume(); err != nil {
			t.Fatal(err)
		}
		if r.Outcome != engine.ServiceUnavailable || !r.NotReplicated || r.Unreachable {
			t.Fatalf("%s with its replica stopped = %+v, want ServiceUnavailable NotReplicated", what, r)
		}
		if d := time.Since(start); d < ackTimeout || d > ackTimeout+2*time.Second {
			t.Fatalf("%s answered after %v, want the ack timeout (%v)", what, d, ackTimeout)
		}
	}

	create.IdempotencyKey = "second"
	paused("CreateListing", func() engine.Result { _, r, _ := s.CreateListing(ctx, create); return r })
	v2, r, err := s.CreateListing(ctx, create)
	if err != nil || !r.OK() || !r.Replay {
		t.Fatalf("the retried creation = %+v %v, want a replay of the applied one", r, err)
	}
	v = v2
	onReplica("the retried creation")

	lc := k.Lease(v.Lease)
	renew := engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
		LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: v.Version, CurrentPlayers: -1}
	paused("RenewLease", func() engine.Result { _, r, _ := s.RenewLease(ctx, renew); return r })
	cv, r, err := s.RenewLease(ctx, renew)
	if err != nil || r.Outcome != engine.Conflict || cv.Version != v.Version+1 {
		t.Fatalf("the retried renewal = %v version %d %v, want Conflict at version %d (the first one took)", r.Outcome, cv.Version, err, v.Version+1)
	}

	del := engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc)}
	paused("DeleteListing", func() engine.Result { r, _ := s.DeleteListing(ctx, del); return r })
	if r, err := s.DeleteListing(ctx, del); err != nil || r.Outcome != engine.NotFound {
		t.Fatalf("the retried deletion = %v %v, want NotFound (the first one took)", r.Outcome, err)
	}
	n, err := bc.Do(ctx, bc.B().Exists().Key("rdv:{acks}:l:"+v.ID.UUID.String()).Build()).AsInt64()
	if err != nil || n != 0 {
		t.Fatalf("after the retried deletion, the replica still holds the listing: %d %v", n, err)
	}
}

// TestAcknowledgedWritesWithoutReplicas: a primary with no replica
// acknowledges no write when one is asked for; reads are served.
func TestAcknowledgedWritesWithoutReplicas(t *testing.T) {
	_, c := dedicatedServer(t)
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "alone", Limits: engine.DefaultLimits(),
		Keyring: engine.RandomKeyring(), AckReplicas: 1, AckTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, r, err := s.CreateListing(context.Background(), engine.CreateListing{Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o",
		IdempotencyKey: "k", Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4}})
	if err != nil || !r.NotReplicated {
		t.Fatalf("CreateListing without a replica = %+v %v, want NotReplicated", r, err)
	}
	if !s.Available() {
		t.Fatal("the store is not available for reads")
	}
}
