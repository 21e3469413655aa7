package redisstore_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// TestBrowseMirrorMemoryWithinTheMemoryStore: the local browse index of
// n visible listings takes no more heap than the in-memory store holding
// the same n listings with fresh presence, each with three indexed
// attributes (in both stores' per-value attribute sets).
func TestBrowseMirrorMemoryWithinTheMemoryStore(t *testing.T) {
	const n = 5000
	ctx := context.Background()
	spec := func(i int) engine.CreateListing {
		return engine.CreateListing{Tenant: mirrorTenant, Owner: engine.Subject(fmt.Sprintf("o%d", i/50)),
			IdempotencyKey: fmt.Sprintf("k%d", i), Spec: engine.ListingSpec{Region: []string{"eu", "us", "ap"}[i%3],
				ProtocolVersion: 1, BuildVersion: "1.0.0", DisplayName: fmt.Sprintf("listing number %d", i),
				Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 16, CurrentPlayers: i % 17,
				Attributes: engine.Attributes{{Name: "level", Num: int64(i % 40), IsNum: true},
					{Name: "map", Str: fmt.Sprintf("map%d", i%12)}, {Name: "mode", Str: []string{"coop", "versus"}[i%2]}}},
			Doc: []byte(fmt.Sprintf(`{"display_name":"listing number %d","region":"eu","max_players":16}`, i))}
	}
	refreshAll := func(s engine.Store, k *engine.Keyring, views []engine.ListingView) {
		for i := 0; i < len(views); i += 500 {
			var ops []engine.Op
			for _, v := range views[i:min(i+500, len(views))] {
				pc := k.Presence(v.Presence)
				ops = append(ops, engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence,
					Key: engine.FingerprintOf(&pc), Seq: 1, Public: netipAP("203.0.113.10:4000")}})
			}
			if err := s.ApplyBatch(ctx, ops); err != nil {
				t.Fatal(err)
			}
			for _, op := range ops {
				if !op.Result.OK() {
					t.Fatalf("refresh: %v", op.Result.Outcome)
				}
			}
		}
	}
	l := engine.DefaultLimits()

	f := newMirrorFixture(t)
	cmds := make([]engine.CreateListing, n)
	for i := range cmds {
		cmds[i] = spec(i)
	}
	views, err := f.a.CreateListingsPipelined(ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	refreshAll(f.a, f.k, views)
	cmds, views = nil, nil
	c := f.instance()
	before := heapInUse()
	if got := count(t, c, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1}); got != engine.BrowsePageMax {
		t.Fatalf("the index shows %d listings on a page", got)
	}
	index := heapInUse() - before
	runtime.KeepAlive(c)

	k := engine.RandomKeyring()
	before = heapInUse()
	ms, err := memstore.New(l, engine.NewSystemClock(), k)
	if err != nil {
		t.Fatal(err)
	}
	mviews := make([]engine.ListingView, 0, n)
	for i := 0; i < n; i++ {
		v, r, err := ms.CreateListing(ctx, spec(i))
		if err != nil || !r.OK() {
			t.Fatalf("memstore create: %v %v", r.Outcome, err)
		}
		mviews = append(mviews, v)
	}
	refreshAll(ms, k, mviews)
	mviews = nil
	mem := heapInUse() - before
	runtime.KeepAlive(ms)

	t.Logf("%d visible listings: local browse index %d bytes (%d per listing), memory store %d bytes (%d per listing)",
		n, index, index/n, mem, mem/n)
	if index > mem {
		t.Fatalf("the local browse index takes %d bytes, more than the memory store's %d", index, mem)
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
