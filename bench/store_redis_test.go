package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio"
)

// The Redis store's per-transition benchmarks at the default ceilings'
// fill (25,000 listings with presence, 10,000 attempts), made through the
// Store API like the in-memory store's (impl=mem/listings=25000 in the
// store benchmarks), on one redis-server on loopback started for the
// process. ns/op is the client's wall time (one round trip); redis-us/op
// is the server's CPU per call (INFO commandstats: usec of FCALL ÷ calls),
// and for batched presence redis-us/refresh per refresh inside the batch.
//
//	go test -run '^$' -bench '^BenchmarkRedisStore' -benchtime 2000x -count 3 ./bench/
//
// With RDV_CALLGRIND set to a directory, redis-server runs under valgrind's
// callgrind and redis-instr/op (and /refresh) report the instructions it
// executed per call, request parsing included: a count that the machine's
// load does not move (redistest.CallgrindEnv; the fill takes minutes then).
//
// The store's clock is the fixture's manual one (passed to every call, as
// the contract tests do), so nothing of the fill expires during a run.

var redisBench struct {
	once   sync.Once
	srv    *redistest.Server
	client rueidis.Client
	err    error
}

// TestMain stops the benchmarks' redis-server when the process is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if redisBench.client != nil {
		redisBench.client.Close()
	}
	if redisBench.srv != nil {
		redisBench.srv.Stop()
	}
	os.Exit(code)
}

// redisClient starts the process's redis-server (once) and returns a client on it.
func redisClient() (rueidis.Client, error) {
	redisBench.once.Do(func() {
		if why := redistest.Missing(); why != "" {
			redisBench.err = fmt.Errorf("%s", why)
			return
		}
		if redisBench.srv, redisBench.err = redistest.Start(); redisBench.err != nil {
			return
		}
		redisBench.client, redisBench.err = rueidis.NewClient(rueidis.ClientOption{
			InitAddress: []string{redisBench.srv.Addr}, DisableCache: true})
	})
	return redisBench.client, redisBench.err
}

// newRedisStore is storeImpls["redis"]: each fixture on its own deployment
// name. Its creation ceilings are raised further than the others' so the
// create and join benchmarks admit every call at the full fill.
func newRedisStore(l engine.Limits, c engine.Clock, k *engine.Keyring) (engine.Store, error) {
	client, err := redisClient()
	if err != nil {
		return nil, err
	}
	l.MaxListings += 1 << 22
	l.MaxPresence += 1 << 22
	return redisstore.New(context.Background(), redisstore.Config{Client: client, Name: "bench-" + strconv.Itoa(int(time.Now().UnixNano()%1e9)),
		Limits: l.WholePools(), Keyring: k, Clock: c, Timeout: 10 * time.Second})
}

// redisFixture is the 25,000-listing fill on the Redis store, or skips b
// when redis-server is not installed.
func redisFixture(b *testing.B) *storeFixture {
	b.Helper()
	if _, err := redisClient(); err != nil {
		redistest.SkipIfMissing(b)
		b.Fatal(err)
	}
	return fixture(b, storeCase{"redis", 25_000})
}

// measureRedis runs the benchmark loop between a reset and a read of the
// server's command statistics and reports the server's CPU per call, and
// per inner op when a call carries several.
func measureRedis(b *testing.B, inner int, loop func()) {
	b.Helper()
	ctx := context.Background()
	c := redisBench.client
	if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
		b.Fatal(err)
	}
	redisBench.srv.MeasureInstructions(b, inner, loop)
	redistest.ReportFCallCost(b, c, inner)
}

// BenchmarkRedisStore measures each transition the SHARED-STATE targets
// name, at the full fill: 128 presence refreshes in one ApplyBatch (the
// most one commit of the server carries on Redis, netio.RemoteBatch: two
// reads' worth, which a saturated server fills), a lease renewal, a
// listing creation, a join attempt and a 100-item browse page. The
// refreshes are measured apart for the 15,000 listings without a pending
// offer (the usual refresh: an offer is pending only until the host's next
// datagram binds it) and the 10,000 that hold one of the fill's unbound
// attempts (the refresh answers the offer).
func BenchmarkRedisStore(b *testing.B) {
	ctx := context.Background()
	presence := func(offered bool) func(b *testing.B) {
		return func(b *testing.B) {
			f := redisFixture(b)
			from, to := f.offered, len(f.ls)
			if offered {
				from, to = 0, f.offered
			}
			ops := make([]engine.Op, netio.RemoteBatch)
			pub := hostAddr(9)
			// One untimed round first: the fill binds presence outside
			// ApplyBatch, and a running instance names a listing by ID
			// once it has seen one refresh of it (the first goes by
			// handle), so the timed calls are the usual refresh.
			for range (to - from + len(ops) - 1) / len(ops) {
				f.batchPresenceIn(b, ctx, ops, pub, from, to)
			}
			measureRedis(b, len(ops), func() {
				for b.Loop() {
					f.batchPresenceIn(b, ctx, ops, pub, from, to)
				}
			})
			if got := ops[0].PresenceView.NPending > 0; got != offered {
				b.Fatalf("a refresh answered pending offers %v, want %v", got, offered)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ops)), "ns/item")
		}
	}
	batch := "op=presence-batch" + strconv.Itoa(netio.RemoteBatch)
	b.Run(batch, presence(false))
	b.Run(batch+"-offered", presence(true))
	b.Run("op=renew", func(b *testing.B) {
		f := redisFixture(b)
		measureRedis(b, 1, func() {
			for b.Loop() {
				f.renew(b, ctx)
			}
		})
	})
	b.Run("op=create", func(b *testing.B) {
		f := redisFixture(b)
		sp := fillSpec(0, 1)
		doc := fillDoc(&sp)
		measureRedis(b, 1, func() {
			for b.Loop() {
				f.serial++
				_, r, err := f.s.CreateListing(ctx, engine.CreateListing{Tenant: storeTenant, Owner: engine.Subject("create-" + strconv.Itoa(f.serial/50)),
					IdempotencyKey: "create-" + strconv.Itoa(f.serial), Spec: sp, Doc: doc})
				if err != nil || !r.OK() {
					b.Fatalf("create: %v %v", r.Outcome, err)
				}
			}
		})
	})
	b.Run("op=join", func(b *testing.B) {
		f := redisFixture(b)
		measureRedis(b, 1, func() {
			for b.Loop() {
				i := f.pick()
				f.serial++
				_, r, err := f.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: storeTenant, Client: engine.Subject("join-" + strconv.Itoa(f.serial%100)),
					IdempotencyKey: "join-" + strconv.Itoa(f.serial), Listing: f.ls[i].ID, ProtocolVersion: 7})
				if err != nil || !r.OK() {
					b.Fatalf("join: %v %v", r.Outcome, err)
				}
			}
		})
	})
	b.Run("op=browse100", func(b *testing.B) {
		f := redisFixture(b)
		dst := make([]engine.ListingView, 0, engine.BrowsePageMax)
		cursor := 0
		measureRedis(b, 1, func() {
			for b.Loop() {
				f.browsePage(b, ctx, dst, &cursor)
			}
		})
	})
	// The page HTTP serves: BrowseItems from the instance's local index,
	// one rdv_browse_sync per page (the index is built before the loop).
	b.Run("op=browse100-items", func(b *testing.B) {
		f := redisFixture(b)
		dst := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
		cursor := 0
		f.browseItemsPage(b, ctx, dst, &cursor)
		measureRedis(b, 1, func() {
			for b.Loop() {
				f.browseItemsPage(b, ctx, dst, &cursor)
			}
		})
	})
}
