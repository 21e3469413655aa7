package memstore

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Zero allocations on the per-datagram and renew paths in steady state.

func wantNoAllocs(t *testing.T, name string, runs int, f func()) {
	t.Helper()
	if n := testing.AllocsPerRun(runs, f); n != 0 {
		t.Fatalf("%s: %v allocations per run, want 0", name, n)
	}
}

// applyAll applies ops as one batch and requires every op to succeed.
func (f *fx) applyAll(t *testing.T, ops []engine.Op) {
	t.Helper()
	if err := f.s.ApplyBatch(f.ctx, ops); err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		if ops[i].Err != nil || ops[i].Result.Outcome != engine.Success {
			t.Fatalf("op %d = %v %v", i, ops[i].Result, ops[i].Err)
		}
	}
}

func TestAllocsPresenceRefresh(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	f.attempt(v, "c") // a pending attempt is reported too
	cmd := engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 1, Public: fxPub(40000)}
	wantNoAllocs(t, "BindHostPresence", 100, func() {
		cmd.Seq++
		pv, r, err := f.s.BindHostPresence(f.ctx, cmd)
		if err != nil || r.Outcome != engine.Success || pv.NPending != 1 {
			t.Fatalf("refresh = %v %v", r, err)
		}
	})
	f.check()
}

func TestAllocsRenew(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	cmd := engine.RenewLease{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease), ExpectedVersion: 1, CurrentPlayers: 3}
	wantNoAllocs(t, "RenewLease", 100, func() {
		nv, r, err := f.s.RenewLease(f.ctx, cmd)
		if err != nil || r.Outcome != engine.Success {
			t.Fatalf("renew = %v %v", r, err)
		}
		cmd.ExpectedVersion = nv.Version
	})
	f.check()
}

func TestAllocsBindAndAttemptHost(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	const runs = 50
	var atts []engine.AttemptView
	for i := 0; i < runs+1; i++ {
		atts = append(atts, f.attempt(v, "c"))
	}
	i := 0
	wantNoAllocs(t, "BindAttemptEndpoint (first bind)", runs, func() {
		_, r, err := f.s.BindAttemptEndpoint(f.ctx, f.bindCmdPre(atts[i], engine.RoleHost))
		if err != nil || r.Outcome != engine.Success || r.Replay {
			t.Fatalf("bind = %v %v", r, err)
		}
		i++
	})
	cmd := f.bindCmd(atts[0], engine.RoleHost, 1000)
	wantNoAllocs(t, "BindAttemptEndpoint (identical retransmission)", runs, func() {
		_, r, err := f.s.BindAttemptEndpoint(f.ctx, cmd)
		if err != nil || !r.Replay {
			t.Fatalf("rebind = %v %v", r, err)
		}
	})
	wantNoAllocs(t, "AttemptHost", runs, func() {
		if h, ok := f.s.AttemptHost(atts[3].Handle); !ok || h != v.Presence {
			t.Fatalf("AttemptHost failed")
		}
	})
	f.check()
}

// bindCmdPre is bindCmd with the key derived up front (outside the measured
// function: deriving keys is the caller's cost, not the store's).
func (f *fx) bindCmdPre(a engine.AttemptView, role engine.Role) engine.BindAttempt {
	return f.bindCmd(a, role, 1000)
}

func TestAllocsApplyBatch(t *testing.T) {
	f := newFx(t, nil)
	const runs = 20
	var vs []engine.ListingView
	for i := 0; i < 8; i++ {
		vs = append(vs, f.visible("pub"))
	}
	// Per run: 8 presence refreshes and one attempt completed by two binds
	// (the second consumes the introduction).
	type pair struct{ host, client engine.BindAttempt }
	var pairs []pair
	for i := 0; i < runs+1; i++ {
		a := f.attempt(vs[i%8], "c")
		pairs = append(pairs, pair{f.bindCmd(a, engine.RoleHost, 1000), f.bindCmd(a, engine.RoleClient, 2000)})
	}
	ops := make([]engine.Op, 10)
	seq := uint64(1)
	run := 0
	wantNoAllocs(t, "ApplyBatch", runs, func() {
		seq++
		for i := 0; i < 8; i++ {
			ops[i] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: vs[i].Presence, Key: f.keys.Presence(vs[i].Presence), Seq: seq, Public: fxPub(40000)}}
		}
		ops[8] = engine.Op{Kind: engine.OpBindAttempt, Bind: pairs[run].host}
		ops[9] = engine.Op{Kind: engine.OpBindAttempt, Bind: pairs[run].client}
		run++
		f.applyAll(t, ops)
		if !ops[9].FirstIntro {
			t.Fatalf("introduction not consumed")
		}
	})
	f.check()
}

func TestAllocsBrowse(t *testing.T) {
	f := newFx(t, nil)
	for i := 0; i < 30; i++ {
		cmd := f.listingCmd("pub")
		cmd.Doc = []byte(`{"region":"eu-central"}`)
		v := f.create(cmd)
		f.presence(v, 1)
	}
	q := engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Region: "eu-central", Limit: 20}
	views := make([]engine.ListingView, 0, engine.BrowsePageMax)
	items := make([]engine.BrowseItem, 0, engine.BrowsePageMax)
	wantNoAllocs(t, "BrowseVisible", 100, func() {
		got, more, r, err := f.s.BrowseVisible(f.ctx, q, views[:0])
		if err != nil || r.Outcome != engine.Success || len(got) != 20 || !more {
			t.Fatalf("browse = %d %v %v %v", len(got), more, r, err)
		}
	})
	wantNoAllocs(t, "BrowseItems", 100, func() {
		got, next, r, err := f.s.BrowseItems(f.ctx, q, items[:0])
		if err != nil || r.Outcome != engine.Success || len(got) != 20 || !next.More {
			t.Fatalf("browse items = %d %v %v %v", len(got), next.More, r, err)
		}
	})
}
