package bench

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// TestStoreHotPathsDoNotAllocate guards the per-datagram and renew paths of
// MemStore at a filled store: presence refresh, lease renewal and a batch of
// 64 heartbeats allocate nothing.
func TestStoreHotPathsDoNotAllocate(t *testing.T) {
	f, err := newFixture(storeCase{"mem", 1_000}, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pub := hostAddr(3)
	check := func(name string, fn func()) {
		t.Helper()
		fn() // warm up: first-use growth is not steady state
		if n := testing.AllocsPerRun(200, fn); n != 0 {
			t.Errorf("%s allocates %v times per call, want 0", name, n)
		}
	}
	check("BindHostPresence", func() {
		i := f.pick()
		f.seq[i]++
		_, r, err := f.s.BindHostPresence(ctx, engine.BindPresence{Handle: f.ls[i].Presence, Key: f.presKeys[i], Seq: f.seq[i], Public: pub})
		if err != nil || !r.OK() {
			t.Fatalf("presence: %v %v", r.Outcome, err)
		}
	})
	check("RenewLease", func() {
		i := f.pick()
		v := &f.ls[i]
		nv, r, err := f.s.RenewLease(ctx, engine.RenewLease{Tenant: storeTenant, Owner: v.Owner, Listing: v.ID,
			Lease: v.Lease, LeaseKey: f.leaseKeys[i], ExpectedVersion: f.version[i], CurrentPlayers: 2})
		if err != nil || !r.OK() {
			t.Fatalf("renew: %v %v", r.Outcome, err)
		}
		f.version[i] = nv.Version
	})
	ops := make([]engine.Op, storeBatch)
	check("ApplyBatch(64 heartbeats)", func() {
		for j := range ops {
			i := f.pick()
			f.seq[i]++
			ops[j] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: f.ls[i].Presence, Key: f.presKeys[i], Seq: f.seq[i], Public: pub}}
		}
		if err := f.s.ApplyBatch(ctx, ops); err != nil {
			t.Fatal(err)
		}
	})
	// Rejections on the datagram path do not allocate either.
	check("stale BindHostPresence", func() {
		_, r, _ := f.s.BindHostPresence(ctx, engine.BindPresence{Handle: f.ls[0].Presence, Key: f.presKeys[0], Seq: 1, Public: pub})
		if r.Outcome != engine.Conflict {
			t.Fatalf("stale presence: %v", r.Outcome)
		}
	})
}
