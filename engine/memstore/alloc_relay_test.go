package memstore

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Zero allocations on the relay fallback's datagram paths: a relayed bind
// consuming the relay introduction, its read-back, an outcome report (first
// and repeated), MarkOffered, and an attempt's end leaving a tombstone.

func TestAllocsRelayOps(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	const runs = 20
	type pair struct{ host, client engine.BindAttempt }
	var pairs []pair
	var atts []engine.AttemptView
	for i := 0; i < runs+1; i++ {
		a := f.attempt(v, "c")
		h, c := f.bindCmd(a, engine.RoleHost, 1000), f.bindCmd(a, engine.RoleClient, 2000)
		h.Relayed = netip.AddrPortFrom(netip.MustParseAddr("192.0.2.50"), 5000)
		c.Relayed = netip.AddrPortFrom(netip.MustParseAddr("192.0.2.51"), 5001)
		pairs, atts = append(pairs, pair{h, c}), append(atts, a)
	}
	ops := make([]engine.Op, 4)
	run := 0
	wantNoAllocs(t, "ApplyBatch (relayed binds, outcome reports)", runs, func() {
		p := pairs[run]
		rep := engine.PunchReport{Handle: p.host.Handle, Role: engine.RoleHost, Key: p.host.Key, Path: engine.PathRelayed, ConnectMillis: 900}
		ops[0] = engine.Op{Kind: engine.OpBindAttempt, Bind: p.host}
		ops[1] = engine.Op{Kind: engine.OpBindAttempt, Bind: p.client}
		ops[2] = engine.Op{Kind: engine.OpOutcome, Report: rep}
		ops[3] = engine.Op{Kind: engine.OpOutcome, Report: rep}
		run++
		f.applyAll(t, ops)
		if !ops[1].FirstRelay || ops[2].Duplicate || !ops[3].Duplicate || ops[3].Tenant != fxTenant {
			t.Fatalf("relay introduction %v, reports duplicate %v %v", ops[1].FirstRelay, ops[2].Duplicate, ops[3].Duplicate)
		}
	})
	ops = ops[:1]
	wantNoAllocs(t, "ApplyBatch (relay introduction read back)", runs, func() {
		ops[0] = engine.Op{Kind: engine.OpBindAttempt, Bind: pairs[0].client}
		if err := f.s.ApplyBatch(f.ctx, ops); err != nil || !ops[0].RelayReady || ops[0].FirstRelay {
			t.Fatalf("read back: %v %v", ops[0].Result, err)
		}
	})
	i := 0
	wantNoAllocs(t, "MarkOffered", runs, func() {
		if r, err := f.s.MarkOffered(f.ctx, atts[i].Handle); err != nil || !r.OK() {
			t.Fatalf("MarkOffered = %v %v", r, err)
		}
		i++
	})
	f.check()
}

// TestAllocsAttemptEndLeavesTombstone: once the tombstone pool is full (at
// the attempts ceiling), an attempt's end evicts the oldest tombstone and
// reuses its slot: the cleanup a heartbeat runs does not allocate.
func TestAllocsAttemptEndLeavesTombstone(t *testing.T) {
	const runs = 20
	f := newFx(t, func(l *engine.Limits) {
		l.MaxAttempts, l.AttemptTTL = runs+1, 10*time.Second
		*l = l.DefaultShares().WholePools()
	})
	v := f.visible("pub-1")
	seq := uint64(1)
	for range runs + 1 { // these end first and fill the tombstone pool
		f.attempt(v, "c")
	}
	f.clock.Advance(f.s.lim.AttemptTTL)
	seq++
	f.presence(v, seq)
	for range runs + 1 { // these end one per run, a millisecond apart
		f.attempt(v, "c")
		f.clock.Advance(time.Millisecond)
	}
	f.clock.Advance(f.s.lim.AttemptTTL - time.Duration(runs+1)*time.Millisecond)
	ops := make([]engine.Op, 1)
	wantNoAllocs(t, "heartbeat ending an attempt", runs, func() {
		f.clock.Advance(time.Millisecond)
		seq++
		ops[0] = engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: seq, Public: fxPub(40000)}}
		if err := f.s.ApplyBatch(f.ctx, ops); err != nil || !ops[0].Result.OK() {
			t.Fatalf("heartbeat = %v %v", ops[0].Result, err)
		}
	})
	if f.s.tombs.n != runs+1 || f.s.attempts.n != 0 {
		t.Fatalf("%d tombstones, %d attempts left; want %d and 0", f.s.tombs.n, f.s.attempts.n, runs+1)
	}
	f.check()
}
