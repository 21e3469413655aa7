package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestViewsNameTheInstancesRefreshesAndBindsReached: two stores of one
// deployment (two instances) record which of them received the host's
// latest presence refresh and each side's first bind, and every attempt
// view names them, whichever instance reads it: a refresh through b, then a
// join through a, names b; a refresh through a moves it, and one through b
// moves it back. A client bind
// through b and the completing host bind through a name b and a. An
// identical bind retransmitted to the other instance is a replay that
// changes nothing, the recorded instance included.
func TestViewsNameTheInstancesRefreshesAndBindsReached(t *testing.T) {
	ctx := context.Background()
	a, k, v := newOneListingStore(t, engine.DefaultLimits(), nil)
	b := secondInstance(t, a, k)
	if a.InstanceID() == b.InstanceID() {
		t.Fatal("two stores share an instance ID")
	}
	pc := k.Presence(v.Presence)
	seq := uint64(0)
	refresh := func(via *redisstore.Store) {
		t.Helper()
		seq++
		ops := []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence,
			Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}}}
		if err := via.ApplyBatch(ctx, ops); err != nil || !ops[0].Result.OK() {
			t.Fatalf("refresh %d: %v %v", seq, ops[0].Result.Outcome, err)
		}
	}
	join := func(via *redisstore.Store, key string) engine.AttemptView {
		t.Helper()
		av, r, err := via.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: "c", IdempotencyKey: key,
			Listing: v.ID, ProtocolVersion: v.Spec.ProtocolVersion})
		if err != nil || !r.OK() {
			t.Fatalf("join %s: %v %v", key, r.Outcome, err)
		}
		return av
	}

	refresh(b)
	first := join(a, "j1")
	if first.HostPresenceInstance != b.InstanceID() {
		t.Fatalf("presence refreshed through b, join through a: view names %v, want b %v", first.HostPresenceInstance, b.InstanceID())
	}
	if !first.HostInstance.IsZero() || !first.PeerInstance.IsZero() {
		t.Fatalf("an unbound attempt names bind instances %v %v", first.HostInstance, first.PeerInstance)
	}
	// The single-call refresh records its instance as the batched one does.
	seq++
	if _, r, err := a.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq,
		Public: netipAP("203.0.113.10:4000")}); err != nil || !r.OK() {
		t.Fatalf("BindHostPresence through a: %v %v", r.Outcome, err)
	}
	if got := join(b, "j2").HostPresenceInstance; got != a.InstanceID() {
		t.Fatalf("presence moved to a: view names %v, want a %v", got, a.InstanceID())
	}
	refresh(b)
	refresh(b)
	if got := join(a, "j3").HostPresenceInstance; got != b.InstanceID() {
		t.Fatalf("presence moved back to b: view names %v, want b %v", got, b.InstanceID())
	}

	hc := engine.HostAttemptCapability(&pc, first.Handle)
	cc := k.AttemptClient(first.Handle)
	clientBind := engine.BindAttempt{Handle: first.Handle, Role: engine.RoleClient, Key: engine.FingerprintOf(&cc),
		Public: netipAP("198.51.100.7:6000")}
	cv, r, err := b.BindAttemptEndpoint(ctx, clientBind)
	if err != nil || !r.OK() || cv.PeerInstance != b.InstanceID() || !cv.HostInstance.IsZero() {
		t.Fatalf("client bind through b: %v %v, peer instance %v host instance %v", r.Outcome, err, cv.PeerInstance, cv.HostInstance)
	}
	ops := []engine.Op{{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: first.Handle, Role: engine.RoleHost,
		Key: engine.FingerprintOf(&hc), Public: netipAP("203.0.113.10:4000")}}}
	if err := a.ApplyBatch(ctx, ops); err != nil || !ops[0].Result.OK() || !ops[0].FirstIntro {
		t.Fatalf("host bind through a: %v %v first=%v", ops[0].Result.Outcome, err, ops[0].FirstIntro)
	}
	if got := ops[0].Attempt; got.HostInstance != a.InstanceID() || got.PeerInstance != b.InstanceID() {
		t.Fatalf("completing bind's view: host instance %v peer instance %v, want a %v b %v",
			got.HostInstance, got.PeerInstance, a.InstanceID(), b.InstanceID())
	}

	before := a.Snapshot()
	again, r, err := a.BindAttemptEndpoint(ctx, clientBind)
	if err != nil || !r.OK() || !r.Replay {
		t.Fatalf("client bind retransmitted to a: %v replay=%v %v", r.Outcome, r.Replay, err)
	}
	if again.PeerInstance != b.InstanceID() {
		t.Fatalf("a retransmitted bind moved the client's instance to %v, want b %v", again.PeerInstance, b.InstanceID())
	}
	if after := a.Snapshot(); after != before {
		t.Fatalf("a retransmitted bind changed the state:\n%s\nthen\n%s", before, after)
	}
	if err := a.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// secondInstance is another store of s's deployment (its name, keyring and
// Redis): another instance.
func secondInstance(t *testing.T, s *redisstore.Store, k *engine.Keyring) *redisstore.Store {
	t.Helper()
	b, err := redisstore.New(context.Background(), redisstore.Config{Client: redisClient(t), Name: s.DeploymentName(),
		Limits: engine.DefaultLimits(), Keyring: k})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
