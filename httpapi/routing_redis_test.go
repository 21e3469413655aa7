package httpapi

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestRedisJoinAndRenewalNameTheMediatorWithoutACall: on the Redis store
// with an instance registry, a join attempt and a lease renewal answer the
// mediator of the instance the host's presence last reached (here another
// instance's) with one Redis function call, the transition's: the route is
// read from its answer and the registry this instance holds.
func TestRedisJoinAndRenewalNameTheMediatorWithoutACall(t *testing.T) {
	_, c := redisClient(t)
	ctx, k, limits := context.Background(), engine.RandomKeyring(), testLimits()
	register := func(addr string) *redisstore.Store {
		// An hour's lease: no registry renewal (every lease/4) runs while
		// the calls are counted.
		s, err := redisstore.New(ctx, redisstore.Config{Client: c, Name: "routing", Limits: limits, Keyring: k, InstanceLease: time.Hour})
		if err != nil {
			t.Fatalf("redisstore.New: %v", err)
		}
		if err := s.Register(ctx, addr); err != nil {
			t.Fatalf("Register: %v", err)
		}
		t.Cleanup(func() { _ = s.Leave(ctx) })
		return s
	}
	other := register("127.0.0.1:4002")
	this := register("127.0.0.1:4001") // registered last, so it knows of the other
	h := newHarness(t, limits, func(cfg *Config) { cfg.Store, cfg.Keys = this, k })

	l := h.create(tokPub, listingBody("eu", 7, "public"))
	cp, _ := engine.ParseToken(l.presenceToken)
	if _, r, err := other.BindHostPresence(ctx, engine.BindPresence{Handle: engine.Handle{UUID: mustUUID(t, l.presence)},
		Key: engine.FingerprintOf(&cp), Seq: 1, Public: netip.MustParseAddrPort("198.51.100.7:40000")}); err != nil || !r.OK() {
		t.Fatalf("presence through the other instance: %v %v", r.Outcome, err)
	}
	join := req{method: "POST", path: "/v1/listings/" + l.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "routed-join"}}
	renew := req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}
	for _, step := range []struct {
		name string
		q    req
		code int
	}{{"join", join, 201}, {"renewal", renew, 200}} {
		before := functionCalls(t, c)
		r := h.expect(step.q, step.code, "")
		if got := functionCalls(t, c) - before; got != 1 {
			t.Errorf("%s: %v Redis function calls, want 1 (the transition's)", step.name, got)
		}
		if m := r.str("mediator"); m != "127.0.0.1:4002" {
			t.Errorf("%s names mediator %s, want the other instance's where the presence is", step.name, m)
		}
		h.secrets = append(h.secrets, r.str("token"))
	}
}
