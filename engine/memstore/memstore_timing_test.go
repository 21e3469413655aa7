package memstore

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// Sink keeps benchmark results alive so the compiler cannot drop the work.
var Sink uint64

// benchFill is a store filled with n visible public listings (4 tenants'
// worth of owners, one tenant, 8 regions), built once per size and shared.
type benchFill struct {
	s     *Store
	k     *engine.Keyring
	views []engine.ListingView
	phs   []engine.Handle // presence handles, compact so the harness itself misses the cache less
	pkeys []engine.Fingerprint
	lkeys []engine.Fingerprint
	seq   uint64
}

var (
	benchMu    sync.Mutex
	benchFills = map[int]*benchFill{}
)

var benchSizes = []int{1_000, 25_000, 250_000}

func getBenchFill(b *testing.B, n int) *benchFill {
	benchMu.Lock()
	defer benchMu.Unlock()
	if bf := benchFills[n]; bf != nil {
		return bf
	}
	l := engine.DefaultLimits()
	l.MaxListings, l.MaxPresence, l.MaxIdempotency = n+1000, n+1000, 1<<24
	l = l.WholePools()
	c := engine.NewManualClock()
	k := engine.NewKeyring([32]byte{9})
	s, err := New(l, c, k)
	if err != nil {
		b.Fatal(err)
	}
	bf := &benchFill{s: s, k: k, seq: 1}
	ctx := context.Background()
	pub := netip.MustParseAddrPort("203.0.113.10:40000")
	for i := 0; i < n; i++ {
		sp := storetest.Spec()
		sp.Region = fmt.Sprintf("region-%d", i%8)
		v, r, err := s.CreateListing(ctx, engine.CreateListing{Tenant: fxTenant, Owner: engine.Subject(fmt.Sprintf("pub-%d", i%5000)),
			IdempotencyKey: fmt.Sprintf("k%d", i), Spec: sp})
		if err != nil || r.Outcome != engine.Success {
			b.Fatalf("fill: %v %v", r, err)
		}
		pc, lc := k.Presence(v.Presence), k.Lease(v.Lease)
		bf.pkeys = append(bf.pkeys, engine.FingerprintOf(&pc))
		bf.lkeys = append(bf.lkeys, engine.FingerprintOf(&lc))
		if _, r, _ := s.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: bf.pkeys[i], Seq: 1, Public: pub}); r.Outcome != engine.Success {
			b.Fatalf("fill presence: %v", r)
		}
		bf.views = append(bf.views, v)
		bf.phs = append(bf.phs, v.Presence)
	}
	benchFills[n] = bf
	return bf
}

// eachFill runs bench once per store size, on the store filled to it.
func eachFill(b *testing.B, bench func(b *testing.B, bf *benchFill, n int)) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("listings=%d", n), func(b *testing.B) { bench(b, getBenchFill(b, n), n) })
	}
}

func BenchmarkPresenceRefresh(b *testing.B) {
	eachFill(b, func(b *testing.B, bf *benchFill, n int) {
		ctx := context.Background()
		pub := netip.MustParseAddrPort("203.0.113.10:40000")
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			j := (i * 7919) % n
			bf.seq++
			pv, _, _ := bf.s.BindHostPresence(ctx, engine.BindPresence{Handle: bf.phs[j], Key: bf.pkeys[j], Seq: bf.seq, Public: pub})
			Sink += uint64(pv.TTL)
			i++
		}
	})
}

func BenchmarkApplyBatch64(b *testing.B) {
	eachFill(b, func(b *testing.B, bf *benchFill, n int) {
		ctx := context.Background()
		pub := netip.MustParseAddrPort("203.0.113.10:40000")
		ops := make([]engine.Op, 64)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			bf.seq++
			for k := range ops {
				j := (i * 7919) % n
				ops[k] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: bf.phs[j], Key: bf.pkeys[j], Seq: bf.seq, Public: pub}}
				i++
			}
			if err := bf.s.ApplyBatch(ctx, ops); err != nil {
				b.Fatal(err)
			}
			Sink += uint64(ops[63].Result.Outcome)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ops)), "ns/op-in-batch")
	})
}

func BenchmarkRenewLease(b *testing.B) {
	eachFill(b, func(b *testing.B, bf *benchFill, n int) {
		ctx := context.Background()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			j := (i * 7919) % n
			v := &bf.views[j]
			nv, r, _ := bf.s.RenewLease(ctx, engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
				LeaseKey: bf.lkeys[j], ExpectedVersion: v.Version, CurrentPlayers: -1})
			if r.Outcome == engine.Success {
				v.Version = nv.Version
			}
			Sink += nv.Version
			i++
		}
	})
}

func BenchmarkBrowsePage(b *testing.B) {
	for _, n := range benchSizes {
		for _, region := range []string{"", "region-3"} {
			b.Run(fmt.Sprintf("listings=%d/region=%q", n, region), func(b *testing.B) {
				bf := getBenchFill(b, n)
				ctx := context.Background()
				dst := make([]engine.ListingView, 0, 50)
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					q := engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Region: region, Limit: 50,
						After: bf.views[(i*7919)%n].ID, HasAfter: true}
					items, more, _, _ := bf.s.BrowseVisible(ctx, q, dst[:0])
					Sink += uint64(len(items))
					if more {
						Sink++
					}
					i++
				}
			})
		}
	}
}

func BenchmarkAttemptHost(b *testing.B) {
	eachFill(b, func(b *testing.B, bf *benchFill, n int) {
		ctx := context.Background()
		var hs []engine.Handle
		for i := 0; i < 256; i++ {
			v := bf.views[(i*7919)%n]
			a, r, _ := bf.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: fxTenant, Client: "c",
				IdempotencyKey: fmt.Sprintf("ah-%d-%d", n, i), Listing: v.ID, ProtocolVersion: 7})
			if r.Outcome != engine.Success && r.Outcome != engine.Conflict {
				b.Fatalf("attempt: %v", r)
			}
			hs = append(hs, a.Handle)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			h, ok := bf.s.AttemptHost(hs[i%len(hs)])
			if ok {
				Sink += uint64(h.UUID[0])
			}
			i++
		}
	})
}

// churnKeys numbers BenchmarkListingChurn's idempotency keys over all runs.
var churnKeys atomic.Int64

// BenchmarkListingChurn creates and deletes a listing (with presence) on a
// filled store: the cost of registration, cascade and index upkeep.
func BenchmarkListingChurn(b *testing.B) {
	for _, n := range benchSizes[:2] {
		b.Run(fmt.Sprintf("listings=%d", n), func(b *testing.B) {
			bf := getBenchFill(b, n)
			ctx := context.Background()
			pub := netip.MustParseAddrPort("203.0.113.10:40000")
			b.ReportAllocs()
			for b.Loop() {
				// The fill is shared by every run of -count, so a key must
				// never repeat across runs: a repeated one replays the
				// deleted listing of an earlier run (expired).
				i := churnKeys.Add(1)
				v, r, _ := bf.s.CreateListing(ctx, engine.CreateListing{Tenant: fxTenant, Owner: "churn",
					IdempotencyKey: fmt.Sprintf("churn-%d", i), Spec: storetest.Spec()})
				if r.Outcome != engine.Success {
					b.Fatalf("create: %v", r)
				}
				pc, lc := bf.k.Presence(v.Presence), bf.k.Lease(v.Lease)
				bf.s.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: 1, Public: pub})
				bf.s.DeleteListing(ctx, engine.DeleteListing{Tenant: fxTenant, Owner: "churn", Listing: v.ID, Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc)})
			}
		})
	}
}

// BenchmarkExpiry measures cleanup per expired record: each iteration
// creates a presence-less listing, and the lease schedule expires them all
// at the end (the measured time covers creation plus expiry).
func BenchmarkExpiry(b *testing.B) {
	l := engine.DefaultLimits()
	l.MaxListings, l.MaxIdempotency = 1<<24, 1<<24
	l = l.WholePools()
	c := engine.NewManualClock()
	s, _ := New(l, c, engine.NewKeyring([32]byte{1}))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.CreateListing(ctx, engine.CreateListing{Tenant: fxTenant, Owner: "o", IdempotencyKey: fmt.Sprintf("e%d", i), Spec: storetest.Spec()})
		i++
		if i%4096 == 0 {
			c.Advance(engine.DefaultIdempotencyTTL)
			Sink += uint64(s.Stats().Pools[0].Used)
		}
	}
	c.Advance(engine.DefaultIdempotencyTTL)
	Sink += uint64(s.Stats().Pools[0].Used)
}
