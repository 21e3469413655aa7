package bench

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// BenchmarkStoreBrowseQuery is one 100-item BrowseItems page of a filtered
// or ordered walk over MemStore at 25,000 visible listings of one tenant
// (players 0-8 of 8, a ninth full; four regions; a string attribute mode
// of four values, a string map of ten, a number level 0-19), each page
// continuing the previous one and the walk starting over at its end. The
// unfiltered ID-order page is the baseline the others compare with. On a
// shared machine the wall time per op waits for the CPU; cpu-ns/op is the
// CPU the process used per op (getrusage: user and system, every thread;
// the loop does not allocate, so no GC work), the steadier figure
// (docs/benchmarks/store.md#browse-filters-and-orders):
//
//	go test -run '^$' -bench 'StoreBrowseQuery|StoreQuickJoin' -benchtime 200ms -count 1 ./bench/
func BenchmarkStoreBrowseQuery(b *testing.B) {
	f := queryFixture(b)
	for _, c := range queryCases {
		b.Run("impl=mem/listings=25000/q="+c.name, func(b *testing.B) {
			q := c.q
			q.Tenant, q.ProtocolVersion, q.Limit = storeTenant, 7, engine.BrowsePageMax
			dst := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
			ctx := context.Background()
			w := q
			items := 0
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				got, next, r, err := f.s.BrowseItems(ctx, w, dst[:0])
				if err != nil || !r.OK() {
					b.Fatalf("browse: %v %v", r.Outcome, err)
				}
				items += len(got)
				if next.More {
					w.HasAfter, w.After, w.AfterKey, w.Since = true, next.After, next.AfterKey, next.Since
				} else {
					w = q
				}
			}
			b.ReportMetric(float64(items)/float64(b.N), "items/op")
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkStoreQuickJoin is one quick join ("not full, mode coop, most
// players first") on the same fill, each with a fresh idempotency key.
func BenchmarkStoreQuickJoin(b *testing.B) {
	f := queryFixture(b)
	b.Run("impl=mem/listings=25000/q=not_full_mode_coop", func(b *testing.B) {
		ctx := context.Background()
		cmd := engine.QuickJoin{
			Join:  engine.CreateAttempt{Tenant: storeTenant, Client: "bench-client", ProtocolVersion: 7},
			Query: engine.Browse{Tenant: storeTenant, ProtocolVersion: 7, Filter: engine.BrowseFilter{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}}},
		}
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			f.serial++
			cmd.Join.IdempotencyKey = "qj-" + fmt.Sprint(f.serial)
			if _, r, err := f.s.QuickJoin(ctx, cmd); err != nil || !r.OK() {
				b.Fatalf("quick join: %v %v", r.Outcome, err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
	})
}

type queryCase struct {
	name string
	q    engine.Browse
}

func strEq(name string, vs ...string) []engine.StringFilter {
	return []engine.StringFilter{{Name: name, Values: vs}}
}

func numOp(name string, op engine.NumOp, v int64) []engine.NumberFilter {
	return []engine.NumberFilter{{Name: name, Op: op, Value: v}}
}

var queryCases = []queryCase{
	{"unfiltered", engine.Browse{}},
	{"region", engine.Browse{Region: "eu-central"}},
	{"not_full", engine.Browse{Filter: engine.BrowseFilter{MinFreeSlots: 1}}},
	{"min_free_4", engine.Browse{Filter: engine.BrowseFilter{MinFreeSlots: 4}}},
	{"has_players", engine.Browse{Filter: engine.BrowseFilter{MinPlayers: 1}}},
	{"players_2_to_4", engine.Browse{Filter: engine.BrowseFilter{MinPlayers: 2, MaxPlayers: 4, HasMaxPlayers: true}}},
	{"mode_coop", engine.Browse{Filter: engine.BrowseFilter{Strings: strEq("mode", "coop")}}},
	{"mode_coop_or_pvp", engine.Browse{Filter: engine.BrowseFilter{Strings: strEq("mode", "coop", "pvp")}}},
	{"level_ge_10", engine.Browse{Filter: engine.BrowseFilter{Numbers: numOp("level", engine.OpGe, 10)}}},
	{"level_eq_19", engine.Browse{Filter: engine.BrowseFilter{Numbers: numOp("level", engine.OpEq, 19)}}},
	{"not_full_mode_coop", engine.Browse{Filter: engine.BrowseFilter{MinFreeSlots: 1, Strings: strEq("mode", "coop")}}},
	{"order_id_desc", engine.Browse{Desc: true}},
	{"order_free_slots", engine.Browse{Order: engine.OrderFreeSlots}},
	{"order_free_slots_desc", engine.Browse{Order: engine.OrderFreeSlots, Desc: true}},
	{"order_current_players", engine.Browse{Order: engine.OrderCurrentPlayers}},
	{"order_current_players_desc", engine.Browse{Order: engine.OrderCurrentPlayers, Desc: true}},
	{"order_created_at", engine.Browse{Order: engine.OrderCreated}},
	{"order_created_at_desc", engine.Browse{Order: engine.OrderCreated, Desc: true}},
	{"not_full_mode_coop_most_players", engine.Browse{Order: engine.OrderCurrentPlayers, Desc: true,
		Filter: engine.BrowseFilter{MinFreeSlots: 1, Strings: strEq("mode", "coop")}}},
}

// queryFill is the MemStore fill of the query benchmarks, built once.
type queryFill struct {
	s      *memstore.Store
	serial int
}

var (
	queryOnce sync.Once
	queryFx   *queryFill
	queryErr  error
)

func queryFixture(b *testing.B) *queryFill {
	b.Helper()
	queryOnce.Do(func() { queryFx, queryErr = newQueryFill(25_000) })
	if queryErr != nil {
		b.Fatal(queryErr)
	}
	return queryFx
}

func newQueryFill(n int) (*queryFill, error) {
	clock := engine.NewManualClock()
	var key [32]byte
	copy(key[:], "rendezvous benchmark keyring....")
	k := engine.NewKeyring(key)
	s, err := memstore.New(storeLimits(n, true), clock, k)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	modes := []string{"coop", "pvp", "ctf", "duel"}
	for i := range n {
		sp := fillSpec(i, 1)
		sp.CurrentPlayers = i % 9
		sp.Attributes = engine.Attributes{
			{Name: "level", Num: int64(i % 20), IsNum: true},
			{Name: "map", Str: fmt.Sprintf("map%d", i%10)},
			{Name: "mode", Str: modes[(i/4)%4]},
		}
		clock.Advance(1000) // a microsecond: distinct creation stamps
		cmd := engine.CreateListing{Tenant: storeTenant, Owner: engine.Subject(fmt.Sprintf("pub-%d", i/50)),
			IdempotencyKey: fmt.Sprintf("fill-%d", i), Spec: sp, Doc: fillDoc(&sp)}
		v, r, err := s.CreateListing(ctx, cmd)
		if err != nil || !r.OK() {
			return nil, fmt.Errorf("fill listing %d: %v %v", i, r.Outcome, err)
		}
		pc := k.Presence(v.Presence)
		if _, r, err := s.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: 1, Public: hostAddr(i)}); err != nil || !r.OK() {
			return nil, fmt.Errorf("fill presence %d: %v %v", i, r.Outcome, err)
		}
	}
	return &queryFill{s: s}, nil
}

// processCPU is the CPU time the process used so far, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
