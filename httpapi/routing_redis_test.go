package httpapi

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestRedisJoinAndRenewalNameTheMediatorWithoutACall: on the Redis store
// with an instance registry, a join attempt and a lease renewal answer the
// mediator of the instance the host's presence last reached (here another
// instance's) with one Redis function call more than a request of the
// same principal turned away before its transition (a malformed body): the
// transition's. The route is read from its answer and the registry this
// instance holds.
func TestRedisJoinAndRenewalNameTheMediatorWithoutACall(t *testing.T) {
	srv := redistest.Require(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("connecting to redis-server: %v", err)
	}
	t.Cleanup(c.Close)
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
	fcalls := func() float64 {
		info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := redistest.CommandStat(info, "fcall")
		return n
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
		refused := step.q
		refused.body = "{"
		before := fcalls()
		h.expect(refused, 400, "invalid_request")
		baseline := fcalls() - before
		before = fcalls()
		r := h.expect(step.q, step.code, "")
		if got := fcalls() - before; got != baseline+1 {
			t.Errorf("%s: %v Redis function calls, want %v (the transition's one more than a refused request's %v)",
				step.name, got, baseline+1, baseline)
		}
		if m := r.str("mediator"); m != "127.0.0.1:4002" {
			t.Errorf("%s names mediator %s, want the other instance's where the presence is", step.name, m)
		}
		h.secrets = append(h.secrets, r.str("token"))
	}
}
