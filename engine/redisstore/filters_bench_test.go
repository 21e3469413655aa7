package redisstore_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The Redis CPU of a filtered, ordered browse page and of a quick join at
// 25,000 visible listings, beside the unfiltered page and a plain join of
// the same run (docs/benchmarks/shared-state.md):
//
//	go test -run '^$' -bench 'BenchmarkFiltered' -benchtime 2000x -count 1 ./engine/redisstore/
//
// A page is served from the instance's local index: its Redis cost is the
// one sync call, whatever the filter and order. A quick join is that sync
// call and the call that tries the candidates. redis-us/op here is the
// FCALL time per operation (all its calls; fcalls/op counts them), not per
// call.

const filteredListings = 25_000

// filteredListing is a listing with indexed attributes (mode: one of
// four, level: 0-49) and players 0-15 of 16, one in a hundred full.
func filteredListing(i int) engine.CreateListing {
	c := benchListing(i)
	c.Spec.MaxPlayers, c.Spec.CurrentPlayers = 16, i%16
	if i%100 == 0 {
		c.Spec.CurrentPlayers = 16
	}
	c.Spec.Attributes = engine.Attributes{{Name: "level", Num: int64(i % 50), IsNum: true},
		{Name: "mode", Str: []string{"coop", "versus", "ffa", "ctf"}[(i/7)%4]}}
	return c
}

// filteredQueries are the pages measured: the unfiltered page, each
// filter and each order, and "not full, mode = coop, most players first"
// (a server browser's question).
var filteredQueries = []struct {
	name string
	q    engine.Browse
}{
	{"page=unfiltered", engine.Browse{}},
	{"page=notfull-coop-by-players", engine.Browse{Order: engine.OrderCurrentPlayers, Desc: true,
		Filter: engine.BrowseFilter{MinFreeSlots: 1, Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}}}},
	{"page=notfull", engine.Browse{Filter: engine.BrowseFilter{MinFreeSlots: 1}}},
	{"page=players-2-to-4", engine.Browse{Filter: engine.BrowseFilter{MinPlayers: 2, MaxPlayers: 4, HasMaxPlayers: true}}},
	{"page=coop-or-ctf", engine.Browse{Filter: engine.BrowseFilter{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop", "ctf"}}}}}},
	{"page=level-ge-25", engine.Browse{Filter: engine.BrowseFilter{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: 25}}}}},
	{"page=by-id-desc", engine.Browse{Desc: true}},
	{"page=by-free-slots", engine.Browse{Order: engine.OrderFreeSlots}},
	{"page=by-created-desc", engine.Browse{Order: engine.OrderCreated, Desc: true}},
}

func BenchmarkFiltered(b *testing.B) {
	// A manual clock: on a busy machine the set-up can outlast the
	// presences' lifetime, and their expiry would be measured with the
	// calls that run the cleanup.
	e := newBenchEnvOf(b, filteredListings, filteredListing, engine.NewManualClock())
	ctx := context.Background()
	dst := make([]engine.BrowseItem, 0, 100)
	scoped := func(q engine.Browse) engine.Browse {
		q.Tenant, q.ProtocolVersion, q.Limit = benchTenant, 1, 100
		return q
	}
	page := func(q engine.Browse) {
		items, _, r, err := e.s.BrowseItems(ctx, q, dst[:0])
		if err != nil || !r.OK() || len(items) != 100 {
			b.Fatalf("%d %v %v", len(items), r.Outcome, err)
		}
	}
	page(scoped(filteredQueries[0].q)) // the instance's first page builds its index
	for _, fq := range filteredQueries {
		q := scoped(fq.q)
		b.Run(fq.name, func(b *testing.B) {
			e.run(b, 1, func(int) { page(q) })
			perOp(b, e)
		})
	}
	joins := 0
	b.Run("op=join", func(b *testing.B) {
		e.run(b, 1, func(i int) {
			joins++
			v := e.views[(joins*7)%len(e.views)]
			if v.CurrentPlayers == v.Spec.MaxPlayers {
				v = e.views[(joins*7+1)%len(e.views)]
			}
			_, r, err := e.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: benchTenant, ProtocolVersion: 1,
				Client: engine.Subject("j" + strconv.Itoa(joins)), IdempotencyKey: "j", Listing: v.ID})
			if err != nil || !r.OK() {
				b.Fatalf("%v %v", r.Outcome, err)
			}
		})
		perOp(b, e)
	})
	b.Run("op=quickjoin-notfull-coop", func(b *testing.B) {
		e.run(b, 1, func(int) {
			joins++
			_, r, err := e.s.QuickJoin(ctx, engine.QuickJoin{Query: scoped(filteredQueries[1].q), Join: engine.CreateAttempt{
				Tenant: benchTenant, ProtocolVersion: 1, Client: engine.Subject("q" + strconv.Itoa(joins)), IdempotencyKey: "q"}})
			if err != nil || !r.OK() {
				b.Fatalf("%v %v", r.Outcome, err)
			}
		})
		perOp(b, e)
	})
}

// perOp reports the FCALLs since e.run reset the statistics per operation:
// their number and their time.
func perOp(b *testing.B, e *benchEnv) {
	info, err := e.c.Do(context.Background(), e.c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	calls, usec := redistest.CommandStat(info, "fcall")
	b.ReportMetric(calls/float64(b.N), "fcalls/op")
	b.ReportMetric(usec/float64(b.N), "redis-us/op")
}
