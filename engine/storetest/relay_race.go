package storetest

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runRelayRace: both sides binding with relayed addresses at once consume
// the relay introduction exactly once (and read it back otherwise);
// racing outcome reports of one side count once; racing MarkOffered marks
// once.
func runRelayRace(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	for _, relayOnly := range []bool{false, true} {
		cmd := e.attemptCmd(v, "client-1")
		cmd.RelayOnly = relayOnly
		a := e.attemptFrom(cmd)
		host := e.relayBind(a, engine.RoleHost, pub(10), relayed(5002))
		client := e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5001))
		want := engine.RelayIntroduction{Attempt: a.ID, Handle: a.Handle, Host: relayed(5002), Client: relayed(5001)}
		firsts, intros := make([]int, racers), make([]int, racers)
		errs := make([]error, racers)
		race(func(i int) {
			c := host
			if i%2 == 1 {
				c = client
			}
			ops := []engine.Op{bindOp(c)}
			if errs[i] = e.s.ApplyBatch(e.ctx, ops); errs[i] != nil {
				return
			}
			op := ops[0]
			if !op.Result.OK() || op.RelayReady && op.RelayIntro != want {
				t.Errorf("racing relayed bind: %v %+v", op.Result, op.RelayIntro)
			}
			if op.FirstRelay {
				firsts[i]++
			}
			if op.FirstIntro {
				intros[i]++
			}
		})
		nFirst, nIntro := 0, 0
		for i := range firsts {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			nFirst += firsts[i]
			nIntro += intros[i]
		}
		wantIntro := 1
		if relayOnly {
			wantIntro = 0
		}
		if nFirst != 1 || nIntro != wantIntro {
			t.Fatalf("relay-only=%v: FirstRelay %d times, FirstIntro %d times; want 1 and %d", relayOnly, nFirst, nIntro, wantIntro)
		}
		e.check()

		rs, rerrs := make([]engine.Result, racers), make([]error, racers)
		dups := make([]bool, racers)
		race(func(i int) {
			ops := []engine.Op{reportOp(e.reportCmd(a, engine.RoleHost, engine.PathRelayed, uint32(1000+i)))}
			rerrs[i] = e.s.ApplyBatch(e.ctx, ops)
			rs[i], dups[i] = ops[0].Result, ops[0].Duplicate
		})
		counted := 0
		for i := range rs {
			if rerrs[i] != nil || !rs[i].OK() {
				t.Fatalf("racing report %d: %v %v", i, rs[i].Outcome, rerrs[i])
			}
			if !dups[i] {
				counted++
			}
		}
		if counted != 1 {
			t.Fatalf("racing reports of one side counted %d times, want 1", counted)
		}
		race(func(i int) { rs[i], rerrs[i] = e.s.MarkOffered(e.ctx, a.Handle) })
		if m := tally(t, rs, rerrs); m[engine.Success] != racers {
			t.Fatalf("racing MarkOffered: %v", m)
		}
		marked := 0
		for _, r := range rs {
			if !r.Replay {
				marked++
			}
		}
		if marked != 1 {
			t.Fatalf("racing MarkOffered marked %d times, want 1", marked)
		}
		e.check()
	}
}
