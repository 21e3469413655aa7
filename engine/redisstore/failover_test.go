package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// attemptRig is a store with one listing whose host presence is fresh, and
// the means to make join attempts on it.
type attemptRig struct {
	t   testing.TB
	s   *redisstore.Store
	k   *engine.Keyring
	v   engine.ListingView
	seq uint64
	n   int
}

func newAttemptRig(t testing.TB, c rueidis.Client, name string) *attemptRig {
	t.Helper()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: name, Limits: engine.DefaultLimits(), Keyring: k})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	g := &attemptRig{t: t, s: s, k: k}
	v, r, err := s.CreateListing(context.Background(), engine.CreateListing{
		Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "publisher", IdempotencyKey: "listing",
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4},
	})
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	g.v = v
	g.refresh()
	return g
}

// refresh renews the host's presence with the next sequence.
func (g *attemptRig) refresh() {
	g.t.Helper()
	g.seq++
	c := g.k.Presence(g.v.Presence)
	_, r, err := g.s.BindHostPresence(context.Background(), engine.BindPresence{Handle: g.v.Presence,
		Key: engine.FingerprintOf(&c), Seq: g.seq, Public: netipAP("203.0.113.10:4000")})
	if err != nil || !r.OK() {
		g.t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
	}
}

// boundAttempt creates a join attempt and binds both of its endpoints: the
// next ConsumeIntroduction introduces the peers.
func (g *attemptRig) boundAttempt() engine.Handle {
	g.t.Helper()
	g.n++
	ctx := context.Background()
	a, r, err := g.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: g.v.Tenant, Client: "client",
		IdempotencyKey: fmt.Sprintf("join%d", g.n), Listing: g.v.ID, ProtocolVersion: 1})
	if err != nil || !r.OK() {
		g.t.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
	}
	pres := g.k.Presence(g.v.Presence)
	hc, cc := engine.HostAttemptCapability(&pres, a.Handle), g.k.AttemptClient(a.Handle)
	for _, b := range []engine.BindAttempt{
		{Handle: a.Handle, Role: engine.RoleHost, Key: engine.FingerprintOf(&hc), Public: netipAP("203.0.113.10:4000")},
		{Handle: a.Handle, Role: engine.RoleClient, Key: engine.FingerprintOf(&cc), Public: netipAP("198.51.100.7:5000")},
	} {
		if _, r, err := g.s.BindAttemptEndpoint(ctx, b); err != nil || !r.OK() {
			g.t.Fatalf("BindAttemptEndpoint(%v): %v %v", b.Role, r.Outcome, err)
		}
	}
	return a.Handle
}

// pendingAndIntroduced binds two attempts and consumes the second's
// introduction: one attempt of each state a promotion must judge.
func (g *attemptRig) pendingAndIntroduced() (pending, introduced engine.Handle) {
	g.t.Helper()
	pending, introduced = g.boundAttempt(), g.boundAttempt()
	if o := g.consume(introduced); o != engine.Success {
		g.t.Fatalf("ConsumeIntroduction = %v", o)
	}
	return pending, introduced
}

func (g *attemptRig) consume(h engine.Handle) engine.Outcome {
	g.t.Helper()
	_, r, err := g.s.ConsumeIntroduction(context.Background(), h)
	if err != nil {
		g.t.Fatalf("ConsumeIntroduction: %v", err)
	}
	return r.Outcome
}

// voidedEverywhere requires attempt h to be gone for every use: no
// introduction, no read-back, no bind.
func (g *attemptRig) voidedEverywhere(h engine.Handle, what string) {
	g.t.Helper()
	if o := g.consume(h); o != engine.NotFound {
		g.t.Fatalf("ConsumeIntroduction of %s = %v, want NotFound (void)", what, o)
	}
	if _, r, err := g.s.Introduction(context.Background(), h); err != nil || r.Outcome != engine.NotFound {
		g.t.Fatalf("Introduction of %s = %v %v, want NotFound (void)", what, r.Outcome, err)
	}
	cc := g.k.AttemptClient(h)
	if _, r, err := g.s.BindAttemptEndpoint(context.Background(), engine.BindAttempt{Handle: h, Role: engine.RoleClient,
		Key: engine.FingerprintOf(&cc), Public: netipAP("198.51.100.7:5000")}); err != nil || r.Outcome != engine.NotFound {
		g.t.Fatalf("BindAttemptEndpoint of %s = %v %v, want NotFound (void)", what, r.Outcome, err)
	}
}

// worksAgain requires a new attempt to be introduced exactly once, the
// counts to be zero but for it, and the invariants to hold.
func (g *attemptRig) worksAgain() {
	g.t.Helper()
	h := g.boundAttempt()
	if o := g.consume(h); o != engine.Success {
		g.t.Fatalf("ConsumeIntroduction of a new attempt = %v, want Success", o)
	}
	if o := g.consume(h); o != engine.ReplayRejected {
		g.t.Fatalf("second ConsumeIntroduction of a new attempt = %v, want ReplayRejected", o)
	}
	st := g.s.Stats()
	if used := st.Pools[engine.PoolAttempts-1].Used; used != 1 || st.InFlight != 0 {
		g.t.Fatalf("after the new primary: %d attempts, %d in flight; want 1 and 0", used, st.InFlight)
	}
	if u := g.s.TenantUsage(g.v.Tenant); u.Attempts.Used != 1 {
		g.t.Fatalf("tenant attempts %d, want 1", u.Attempts.Used)
	}
	if err := g.s.CheckInvariants(); err != nil {
		g.t.Fatalf("invariants: %v", err)
	}
}

// generation reads how many primaries the deployment's state has seen.
func generation(t testing.TB, c rueidis.Client, name string) int64 {
	t.Helper()
	n, err := c.Do(context.Background(), c.B().Hget().Key("rdv:{"+name+"}:meta").Field("gen").Build()).AsInt64()
	if err != nil && !rueidis.IsRedisNil(err) {
		t.Fatalf("reading the generation: %v", err)
	}
	return n
}

// wantGeneration fails t unless the deployment's generation is want after
// the step the test names (after: "after a restart", ...).
func wantGeneration(t testing.TB, c rueidis.Client, name string, want int64, after string) {
	t.Helper()
	if now := generation(t, c, name); now != want {
		t.Fatalf("generation %d %s, want %d", now, after, want)
	}
}

// TestSentinelFailoverNeverIntroducesTwice drives a real failover in which
// an acknowledged consume is lost: the replicas are cut off from the
// primary (stopped, their links closed), an attempt is introduced on the
// primary, and the primary is killed before the consume replicates. The
// promoted replica holds the attempt bound on both sides and not consumed;
// through Sentinel, the store follows the promotion by itself and refuses
// the attempt (NotFound: the client makes a new one) instead of
// introducing it a second time. min-replicas-to-write is off here: it
// narrows the window in which a primary takes writes its replicas miss,
// and this test shows the guard holds even without it.
func TestSentinelFailoverNeverIntroducesTwice(t *testing.T) {
	top, c := sentinelTopology(t, redistest.SentinelOptions{MinReplicasToWrite: -1})
	ctx := context.Background()
	g := newAttemptRig(t, c, "failover")
	pending, lost := g.boundAttempt(), g.boundAttempt()
	primary, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := top.Do(ctx, primary, "WAIT", fmt.Sprint(len(top.Nodes)-1), "5000"); err != nil {
		t.Fatalf("WAIT: %v", err)
	}
	var replicas []*redistest.Server
	for _, n := range top.Nodes {
		if n.Addr != primary {
			replicas = append(replicas, n)
		}
	}
	for _, r := range replicas {
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
		defer r.Resume()
	}
	if _, err := top.Do(ctx, primary, "CLIENT", "KILL", "TYPE", "replica"); err != nil {
		t.Fatalf("closing the replication links: %v", err)
	}
	if o := g.consume(lost); o != engine.Success {
		t.Fatalf("ConsumeIntroduction on the primary = %v, want Success (acknowledged)", o)
	}
	if _, err := top.KillPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if err := r.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	promoted, err := top.WaitForPromotion(ctx, primary, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// The promoted replica still holds the lost attempt unconsumed: without
	// the guard, it would be introduced again.
	m, err := top.Do(ctx, promoted, "HGETALL", "rdv:{failover}:a:"+attemptID(t, top, promoted, "failover", lost))
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := m.AsStrMap(); f["consumed"] != "0" || f["host"] == "" || f["peer"] == "" {
		t.Fatalf("the promoted replica's copy of the attempt: %v; the test needs it bound and unconsumed", f)
	}
	waitServing(t, g)
	g.voidedEverywhere(lost, "the attempt whose introduction was lost")
	g.voidedEverywhere(pending, "an attempt bound under the old primary")
	g.refresh()
	g.worksAgain()
}

// attemptID reads the ID of the attempt of handle h on node addr from the
// handle index, without running a function there (which would void it).
func attemptID(t *testing.T, top *redistest.Topology, addr, name string, h engine.Handle) string {
	t.Helper()
	m, err := top.Do(context.Background(), addr, "HGET", "rdv:{"+name+"}:ah", h.UUID.String())
	if err != nil {
		t.Fatalf("the promoted replica does not hold the attempt: %v", err)
	}
	id, _ := m.ToString()
	return id
}

// waitServing waits (bounded) until the store's calls reach a primary that
// takes writes.
func waitServing(t testing.TB, g *attemptRig) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !g.s.Available() {
		if time.Now().After(deadline) {
			t.Fatalf("the store does not serve 30s after the promotion")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLibraryIsCheckedAgainAfterAFailedCall: a server running another
// version of the library (a promoted replica that missed a FUNCTION LOAD)
// gets this build's library after the first call that fails on it.
func TestLibraryIsCheckedAgainAfterAFailedCall(t *testing.T) {
	_, c := dedicatedServer(t)
	g := newAttemptRig(t, c, "version")
	stale := "#!lua name=rendezvous\n" +
		"redis.register_function{function_name = 'rdv_version', flags = {'no-writes'}, callback = function() return 'stale' end}\n" +
		"redis.register_function('rdv_get_listing', function() return redis.error_reply('ERR stale library') end)\n"
	if err := c.Do(context.Background(), c.B().FunctionLoad().Replace().FunctionCode(stale).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	get := func() engine.Outcome {
		_, r, err := g.s.GetListing(context.Background(), engine.GetListing{Tenant: g.v.Tenant, Listing: g.v.ID})
		if err != nil {
			t.Fatal(err)
		}
		return r.Outcome
	}
	if o := get(); o != engine.ServiceUnavailable {
		t.Fatalf("GetListing on the stale library = %v, want ServiceUnavailable", o)
	}
	if o := get(); o != engine.Success {
		t.Fatalf("GetListing after the failed call = %v, want Success (library reloaded)", o)
	}
}

// TestManualSentinelFailoverIsFollowed: SENTINEL FAILOVER demotes a live
// primary (its writes answer READONLY) and promotes a replica; the store
// follows without a restart, the listing is still served, and the attempt
// made before is void.
func TestManualSentinelFailoverIsFollowed(t *testing.T) {
	top, c := sentinelTopology(t, redistest.SentinelOptions{})
	ctx := context.Background()
	g := newAttemptRig(t, c, "manual")
	before := g.boundAttempt()
	primary, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := top.Do(ctx, primary, "WAIT", fmt.Sprint(len(top.Nodes)-1), "5000"); err != nil {
		t.Fatal(err)
	}
	if _, err := top.Do(ctx, top.Sentinels[0].Addr, "SENTINEL", "FAILOVER", redistest.MasterName); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	if _, err := top.WaitForPromotion(ctx, primary, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	waitServing(t, g)
	if _, r, err := g.s.GetListing(ctx, engine.GetListing{Tenant: g.v.Tenant, Listing: g.v.ID}); err != nil || !r.OK() {
		t.Fatalf("GetListing after the failover: %v %v", r.Outcome, err)
	}
	g.voidedEverywhere(before, "an attempt bound under the demoted primary")
	g.refresh()
	g.worksAgain()
}

// TestRestartFromPersistenceKeepsAttempts: a primary restarted from its
// own append-only file (synced on every write) has a new replication ID
// but no inherited one: it acknowledged exactly what it loaded, so its
// attempts stay, introduced or not.
func TestRestartFromPersistenceKeepsAttempts(t *testing.T) {
	redistest.SkipIfMissing(t)
	srv, err := redistest.StartPersistent(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	c := newClient(t, srv.Addr)
	t.Cleanup(c.Close)
	g := newAttemptRig(t, c, "restart")
	pending, introduced := g.pendingAndIntroduced()
	gen := generation(t, c, "restart")
	srv.Stop()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	waitServing(t, g)
	// Each pooled connection broken by the restart fails one call
	// (service_unavailable) before the client reconnects it.
	consume := func(h engine.Handle) engine.Outcome {
		o := g.consume(h)
		for i := 0; i < 20 && o == engine.ServiceUnavailable; i++ {
			time.Sleep(50 * time.Millisecond)
			o = g.consume(h)
		}
		return o
	}
	if o := consume(pending); o != engine.Success {
		t.Fatalf("ConsumeIntroduction of an attempt bound before the restart = %v, want Success", o)
	}
	if o := consume(introduced); o != engine.ReplayRejected {
		t.Fatalf("ConsumeIntroduction of an attempt introduced before the restart = %v, want ReplayRejected", o)
	}
	wantGeneration(t, c, "restart", gen, "after a restart (no promotion)")
}
