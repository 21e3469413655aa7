package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// Benchmarks of the Redis store on a dedicated loopback redis-server:
//
//	go test -run '^$' -bench . -benchtime 2000x -count 3 ./engine/redisstore/
//
// ns/op is the client's wall time per transition (one round trip);
// redis-us/op is the server's time inside the function per transition, and
// for batched presence redis-us/refresh per refresh inside the batch (INFO
// commandstats: usec of FCALL / calls, divided by the ops per call). That
// figure is elapsed time, so on a machine whose cores are busy with other
// work it also counts the time the server waited for a core;
// redis-cpu-us/op (and /refresh) is the server process's CPU time (INFO
// cpu, user + system) per transition, which also counts reading the
// request and writing the answer.

type benchEnv struct {
	srv   *redistest.Server
	c     rueidis.Client
	s     *redisstore.Store
	k     *engine.Keyring
	views []engine.ListingView
}

var benchTenant = engine.Tenant{Game: "g", Env: "e"}

func newBenchEnv(b *testing.B, listings int) *benchEnv {
	return newBenchEnvOf(b, listings, benchListing, nil)
}

// newBenchEnvOf is newBenchEnv with the listings spec(0..listings-1) and,
// when not nil, the store's clock.
func newBenchEnvOf(b *testing.B, listings int, spec func(int) engine.CreateListing, clock engine.Clock) *benchEnv {
	srv, c := dedicatedServerB(b)
	l := engine.DefaultLimits()
	l.MaxListings, l.MaxPresence, l.MaxIdempotency, l.MaxAttempts = 1<<20, 1<<20, 1<<21, 1<<20
	l = l.WholePools()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Limits: l, Keyring: k, Timeout: 10 * time.Second, Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{srv: srv, c: c, s: s, k: k}
	cmds := make([]engine.CreateListing, listings)
	for i := range cmds {
		cmds[i] = spec(i)
	}
	if e.views, err = s.CreateListingsPipelined(context.Background(), cmds); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < listings; i += 100 {
		ops := make([]engine.Op, 0, 100)
		for j := i; j < min(i+100, listings); j++ {
			ops = append(ops, engine.Op{Kind: engine.OpPresence, Presence: e.presence(e.views[j], benchSeq)})
		}
		if err := s.ApplyBatch(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

func benchListing(i int) engine.CreateListing {
	return engine.CreateListing{Tenant: benchTenant, Owner: engine.Subject("owner-" + strconv.Itoa(i/100)),
		IdempotencyKey: "k" + strconv.Itoa(i), Doc: []byte(`{"display_name":"bench"}`),
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "bench",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}}
}

// benchSeq is the first presence sequence: a host's heartbeat count after
// about six days at one every five seconds (records hold its digits).
const benchSeq = 100_000

func (e *benchEnv) presence(v engine.ListingView, seq uint64) engine.BindPresence {
	pc := e.k.Presence(v.Presence)
	return engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}
}

// run resets the server's command statistics, runs fn b.N times and
// reports the server's CPU per op and per inner op.
func (e *benchEnv) run(b *testing.B, inner int, fn func(i int)) {
	ctx := context.Background()
	if err := e.c.Do(ctx, e.c.B().ConfigResetstat().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	cpu0 := e.serverCPU(b)
	b.ResetTimer()
	e.srv.MeasureInstructions(b, inner, func() {
		for i := 0; i < b.N; i++ {
			fn(i)
		}
	})
	b.StopTimer()
	cpu := (e.serverCPU(b) - cpu0) * 1e6 / float64(b.N)
	b.ReportMetric(cpu, "redis-cpu-us/op")
	if inner > 1 {
		b.ReportMetric(cpu/float64(inner), "redis-cpu-us/refresh")
	}
	redistest.ReportFCallCost(b, e.c, inner)
}

// serverCPU is the server process's CPU time so far in seconds.
func (e *benchEnv) serverCPU(b *testing.B) float64 {
	info, err := e.c.Do(context.Background(), e.c.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	var sum float64
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "used_cpu_user" || k == "used_cpu_sys" {
			n, _ := strconv.ParseFloat(v, 64)
			sum += n
		}
	}
	return sum
}

func BenchmarkCreateListing(b *testing.B) {
	e := newBenchEnv(b, 1000)
	e.run(b, 1, func(i int) {
		if _, r, err := e.s.CreateListing(context.Background(), benchListing(1_000_000+i)); err != nil || !r.OK() {
			b.Fatalf("%v %v", r.Outcome, err)
		}
	})
}

func BenchmarkRenewLease(b *testing.B) {
	e := newBenchEnv(b, 1000)
	versions := make([]uint64, len(e.views))
	e.run(b, 1, func(i int) {
		j := i % len(e.views)
		v := e.views[j]
		lc := e.k.Lease(v.Lease)
		rv, r, err := e.s.RenewLease(context.Background(), engine.RenewLease{Tenant: benchTenant, Owner: v.Owner, Listing: v.ID,
			Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: versions[j] + 1, CurrentPlayers: -1})
		if err != nil || !r.OK() {
			b.Fatalf("%v %v", r.Outcome, err)
		}
		versions[j] = rv.Version - 1
	})
}

func BenchmarkGetListing(b *testing.B) {
	e := newBenchEnv(b, 1000)
	e.run(b, 1, func(i int) {
		v := e.views[i%len(e.views)]
		if _, r, err := e.s.GetListing(context.Background(), engine.GetListing{Tenant: benchTenant, Listing: v.ID, Joinable: true}); err != nil || !r.OK() {
			b.Fatalf("%v %v", r.Outcome, err)
		}
	})
}

func BenchmarkBrowse20(b *testing.B) {
	e := newBenchEnv(b, 1000)
	dst := make([]engine.ListingView, 0, 20)
	e.run(b, 1, func(i int) {
		items, _, r, err := e.s.BrowseVisible(context.Background(), engine.Browse{Tenant: benchTenant, ProtocolVersion: 1, Limit: 20}, dst[:0])
		if err != nil || !r.OK() || len(items) != 20 {
			b.Fatalf("%d %v %v", len(items), r.Outcome, err)
		}
	})
}

// Batches of 128 refreshes (the server's fullest commit on Redis: two
// reads), 64 (one full read) and 8 (a lightly loaded socket): the call's
// fixed work (the clock, cleanup, the round trip) is shared by fewer
// refreshes.
func BenchmarkApplyBatchPresence128(b *testing.B) { benchApplyBatchPresence(b, 128) }
func BenchmarkApplyBatchPresence64(b *testing.B)  { benchApplyBatchPresence(b, 64) }
func BenchmarkApplyBatchPresence8(b *testing.B)   { benchApplyBatchPresence(b, 8) }

func benchApplyBatchPresence(b *testing.B, n int) {
	e := newBenchEnv(b, 1024)
	ops := make([]engine.Op, n)
	e.run(b, len(ops), func(i int) {
		for j := range ops {
			v := e.views[(i*len(ops)+j)%len(e.views)]
			ops[j] = engine.Op{Kind: engine.OpPresence, Presence: e.presence(v, benchSeq+1+uint64(i))}
		}
		if err := e.s.ApplyBatch(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
		for _, op := range ops {
			if !op.Result.OK() {
				b.Fatalf("presence: %v", op.Result.Outcome)
			}
		}
	})
}
