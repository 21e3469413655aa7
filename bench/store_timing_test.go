package bench

import (
	"context"
	"net/netip"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Side-by-side store benchmarks: MemStore (impl=mem) against the reference
// algorithm (impl=ref, bench/refstore) at the same fill, and MemStore alone
// at 1,000, 25,000 and 250,000 listings. Every fill is made through the
// Store API (see store_fixture_test.go). Compare with benchstat, e.g.
//
//	go test -run '^$' -bench 'Store' -benchtime 300ms -count 6 ./bench/ | tee store.txt
//	benchstat -col /impl -filter '/listings:25000' store.txt

// runStoreCases runs body for every store case as a sub-benchmark.
func runStoreCases(b *testing.B, body func(b *testing.B, f *storeFixture)) {
	for _, c := range storeCases {
		b.Run(c.name(), func(b *testing.B) {
			f := fixture(b, c)
			b.ReportAllocs()
			body(b, f)
		})
	}
}

// BenchmarkStorePresenceRefresh is one host heartbeat: BindHostPresence with
// a rising sequence number, round robin over every listing.
func BenchmarkStorePresenceRefresh(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		pub := hostAddr(7)
		for b.Loop() {
			i := f.pick()
			f.seq[i]++
			pv, r, err := f.s.BindHostPresence(ctx, engine.BindPresence{Handle: f.ls[i].Presence, Key: f.presKeys[i], Seq: f.seq[i], Public: pub})
			if err != nil || !r.OK() {
				b.Fatalf("presence: %v %v", r.Outcome, err)
			}
			StoreSink += uint64(pv.NPending)
		}
	})
}

// BenchmarkStorePresenceRefreshHotSet is BenchmarkStorePresenceRefresh
// cycling over 1,000 listings only, whatever the fill: it separates the
// store's algorithmic cost (flat) from the cache misses of touching a
// working set of 250,000 records round robin.
func BenchmarkStorePresenceRefreshHotSet(b *testing.B) {
	for _, c := range storeCases {
		if c.impl != "mem" {
			continue
		}
		b.Run(c.name()+"/hot=1000", func(b *testing.B) {
			f := fixture(b, c)
			b.ReportAllocs()
			ctx := context.Background()
			pub := hostAddr(7)
			i := 0
			for b.Loop() {
				i++
				if i == 1000 {
					i = 0
				}
				f.seq[i]++
				_, r, err := f.s.BindHostPresence(ctx, engine.BindPresence{Handle: f.ls[i].Presence, Key: f.presKeys[i], Seq: f.seq[i], Public: pub})
				if err != nil || !r.OK() {
					b.Fatalf("presence: %v %v", r.Outcome, err)
				}
			}
		})
	}
}

// BenchmarkStoreLeaseRenew is one CAS lease renewal, round robin.
func BenchmarkStoreLeaseRenew(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		for b.Loop() {
			f.renew(b, ctx)
		}
	})
}

// renew renews the next fill listing's lease (CAS on the version it last
// saw) and fails b unless it succeeds.
func (f *storeFixture) renew(b *testing.B, ctx context.Context) {
	i := f.pick()
	v := &f.ls[i]
	nv, r, err := f.s.RenewLease(ctx, engine.RenewLease{Tenant: storeTenant, Owner: v.Owner, Listing: v.ID,
		Lease: v.Lease, LeaseKey: f.leaseKeys[i], ExpectedVersion: f.version[i], CurrentPlayers: -1})
	if err != nil || !r.OK() {
		b.Fatalf("renew: %v %v", r.Outcome, err)
	}
	f.version[i] = nv.Version
}

// BenchmarkStoreBrowse reads one 100-item page of the tenant's visible
// listings from a cursor that walks the whole ID space.
func BenchmarkStoreBrowse(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		dst := make([]engine.ListingView, 0, engine.BrowsePageMax)
		cursor := 0
		for b.Loop() {
			f.browsePage(b, ctx, dst, &cursor)
		}
	})
}

// browsePage reads the full page after the cursor's next position (the
// cursor walks the whole ID space) and fails b unless it is full.
func (f *storeFixture) browsePage(b *testing.B, ctx context.Context, dst []engine.ListingView, cursor *int) {
	// Start somewhere with at least a full page after it.
	*cursor = (*cursor + 997) % (len(f.sorted) - engine.BrowsePageMax)
	q := engine.Browse{Tenant: storeTenant, ProtocolVersion: 7, Limit: engine.BrowsePageMax,
		After: f.sorted[*cursor], HasAfter: true}
	items, _, r, err := f.s.BrowseVisible(ctx, q, dst[:0])
	if err != nil || !r.OK() || len(items) != engine.BrowsePageMax {
		b.Fatalf("browse: %v %v %d items", r.Outcome, err, len(items))
	}
	StoreSink += uint64(items[0].ID.UUID[0])
}

// browseItemsPage is browsePage through engine.ItemBrowser.
func (f *storeFixture) browseItemsPage(b *testing.B, ctx context.Context, dst []engine.BrowseItem, cursor *int) {
	*cursor = (*cursor + 997) % (len(f.sorted) - engine.BrowsePageMax)
	q := engine.Browse{Tenant: storeTenant, ProtocolVersion: 7, Limit: engine.BrowsePageMax,
		After: f.sorted[*cursor], HasAfter: true}
	items, _, r, err := f.s.(engine.ItemBrowser).BrowseItems(ctx, q, dst[:0])
	if err != nil || !r.OK() || len(items) != engine.BrowsePageMax {
		b.Fatalf("browse: %v %v %d items", r.Outcome, err, len(items))
	}
	StoreSink += uint64(items[0].ID.UUID[0])
}

// BenchmarkStoreBrowseItems is BenchmarkStoreBrowse through
// engine.ItemBrowser, the lighter page the HTTP layer renders (MemStore
// only: the reference has no such method).
func BenchmarkStoreBrowseItems(b *testing.B) {
	for _, c := range storeCases {
		if c.impl != "mem" {
			continue
		}
		b.Run(c.name(), func(b *testing.B) {
			f := fixture(b, c)
			ib := f.s.(engine.ItemBrowser)
			b.ReportAllocs()
			ctx := context.Background()
			dst := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
			cursor := 0
			for b.Loop() {
				cursor = (cursor + 997) % (len(f.sorted) - engine.BrowsePageMax)
				q := engine.Browse{Tenant: storeTenant, ProtocolVersion: 7, Limit: engine.BrowsePageMax,
					After: f.sorted[cursor], HasAfter: true}
				items, _, r, err := ib.BrowseItems(ctx, q, dst[:0])
				if err != nil || !r.OK() || len(items) != engine.BrowsePageMax {
					b.Fatalf("browse items: %v %v %d items", r.Outcome, err, len(items))
				}
				StoreSink += uint64(items[0].ID.UUID[0])
			}
		})
	}
}

// storeBatch is the size of one UDP read batch.
const storeBatch = 64

// BenchmarkStoreBatchPresence commits 64 heartbeats with one ApplyBatch
// (one lock acquisition for MemStore); ns/item is the cost per heartbeat.
func BenchmarkStoreBatchPresence(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		ops := make([]engine.Op, storeBatch)
		pub := hostAddr(9)
		for b.Loop() {
			f.batchPresence(b, ctx, ops, pub)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*storeBatch), "ns/item")
	})
}

// batchPresence commits one refresh per op, round robin over the fill, with
// one ApplyBatch, and fails b unless every one succeeds. It refills only
// the inputs, as a UDP reader reusing its op array does: rewriting each
// whole ~1 KB Op would be the benchmark's cost, not the store's.
func (f *storeFixture) batchPresence(b *testing.B, ctx context.Context, ops []engine.Op, pub netip.AddrPort) {
	f.commitPresence(b, ctx, ops, pub, f.pick)
}

// batchPresenceIn is batchPresence over the fill's listings from to to-1
// only, round robin with a cursor of its own.
func (f *storeFixture) batchPresenceIn(b *testing.B, ctx context.Context, ops []engine.Op, pub netip.AddrPort, from, to int) {
	if f.cursors == nil {
		f.cursors = map[int]int{}
	}
	f.commitPresence(b, ctx, ops, pub, func() int {
		i := from + f.cursors[from]
		f.cursors[from] = (f.cursors[from] + 1) % (to - from)
		return i
	})
}

func (f *storeFixture) commitPresence(b *testing.B, ctx context.Context, ops []engine.Op, pub netip.AddrPort, pick func() int) {
	for j := range ops {
		i := pick()
		f.seq[i]++
		ops[j].Kind = engine.OpPresence
		ops[j].Presence = engine.BindPresence{Handle: f.ls[i].Presence, Key: f.presKeys[i], Seq: f.seq[i], Public: pub}
	}
	if err := f.s.ApplyBatch(ctx, ops); err != nil {
		b.Fatal(err)
	}
	for j := range ops {
		if !ops[j].Result.OK() || ops[j].Err != nil {
			b.Fatalf("batched presence %d: %v %v", j, ops[j].Result.Outcome, ops[j].Err)
		}
	}
}

// BenchmarkStoreListingChurn creates a listing and deletes it (the fill stays
// at the ceilings; the listing ceiling has room for the one churned).
func BenchmarkStoreListingChurn(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		sp := fillSpec(0, 1)
		for b.Loop() {
			f.serial++
			v, r, err := f.s.CreateListing(ctx, engine.CreateListing{Tenant: storeTenant, Owner: "churn",
				IdempotencyKey: "churn-" + strconv.Itoa(f.serial), Spec: sp})
			if err != nil || !r.OK() {
				b.Fatalf("create: %v %v", r.Outcome, err)
			}
			lc := f.k.Lease(v.Lease)
			r, err = f.s.DeleteListing(ctx, engine.DeleteListing{Tenant: storeTenant, Owner: "churn", Listing: v.ID,
				Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc)})
			if err != nil || !r.OK() {
				b.Fatalf("delete: %v %v", r.Outcome, err)
			}
		}
	})
}

// BenchmarkStoreAttemptFlow is a whole join: create an attempt, bind the
// host and the client endpoint, consume the introduction.
func BenchmarkStoreAttemptFlow(b *testing.B) {
	runStoreCases(b, func(b *testing.B, f *storeFixture) {
		ctx := context.Background()
		hostPub, clientPub := hostAddr(1), hostAddr(2)
		for b.Loop() {
			i := f.pick()
			f.serial++
			a, r, err := f.s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: storeTenant, Client: "flow",
				IdempotencyKey: "flow-" + strconv.Itoa(f.serial), Listing: f.ls[i].ID, ProtocolVersion: 7})
			if err != nil || !r.OK() {
				b.Fatalf("attempt: %v %v", r.Outcome, err)
			}
			pc := f.k.Presence(a.HostPresence)
			hc, cc := engine.HostAttemptCapability(&pc, a.Handle), f.k.AttemptClient(a.Handle)
			if _, r, err = f.s.BindAttemptEndpoint(ctx, engine.BindAttempt{Handle: a.Handle, Role: engine.RoleHost,
				Key: engine.FingerprintOf(&hc), Public: hostPub}); err != nil || !r.OK() {
				b.Fatalf("host bind: %v %v", r.Outcome, err)
			}
			if _, r, err = f.s.BindAttemptEndpoint(ctx, engine.BindAttempt{Handle: a.Handle, Role: engine.RoleClient,
				Key: engine.FingerprintOf(&cc), Public: clientPub}); err != nil || !r.OK() {
				b.Fatalf("client bind: %v %v", r.Outcome, err)
			}
			in, r, err := f.s.ConsumeIntroduction(ctx, a.Handle)
			if err != nil || !r.OK() {
				b.Fatalf("consume: %v %v", r.Outcome, err)
			}
			StoreSink += uint64(in.Host.Public.Port())
		}
	})
}
