package storetest

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// runBatch checks ApplyBatch: each op gets its own result, in order, as if
// applied one after another; FirstIntro is set exactly once per attempt.
func runBatch(t *testing.T, f Factory) {
	t.Run("MixedOps", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		w := e.visible("publisher-2")
		a := e.attempt(v, "client-1")
		b := e.attempt(w, "client-2")
		host := e.bindCmd(a, engine.RoleHost, pub(10), lan(10))
		client := e.bindCmd(a, engine.RoleClient, otherPub(20), netipZero)
		badPresence := e.presenceCmd(v, 3, netipZero)
		wrongKey := e.bindCmd(b, engine.RoleClient, pub(30), netipZero)
		wrongKey.Key = e.clientKey(a.Handle)
		ops := []engine.Op{
			{Kind: engine.OpPresence, Presence: e.presenceCmd(v, 2, pub(40001))},                    // 0 ok, pending a
			{Kind: engine.OpPresence, Presence: e.presenceCmd(v, 2, pub(40002))},                    // 1 stale seq
			{Kind: engine.OpBindAttempt, Bind: host},                                                // 2 ok, no intro
			{Kind: engine.OpBindAttempt, Bind: client},                                              // 3 ok, first intro
			{Kind: engine.OpBindAttempt, Bind: client},                                              // 4 replay, intro read back
			{Kind: engine.OpPresence, Presence: badPresence},                                        // 5 invalid
			{Kind: engine.OpBindAttempt, Bind: wrongKey},                                            // 6 not found
			{Kind: engine.OpPresence, Presence: e.presenceCmd(w, 2, pub(40003))},                    // 7 ok, pending b
			{Kind: engine.OpBindAttempt, Bind: withPublic(host, pub(11))},                           // 8 replay rejected
			{Kind: engine.OpPresence, Presence: e.presenceCmd(v, 3, pub(40004))},                    // 9 ok, nothing pending
			{Kind: 0, Presence: e.presenceCmd(v, 4, pub(1))},                                        // 10 unknown kind
			{Kind: engine.OpBindAttempt, Bind: e.bindCmd(b, engine.RoleClient, pub(31), netipZero)}, // 11 ok
		}
		if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
			t.Fatalf("ApplyBatch: %v", err)
		}
		e.check()
		wantOp := func(i int, o engine.Outcome, replay, ready, first bool) {
			t.Helper()
			op := &ops[i]
			if op.Err != nil {
				t.Fatalf("op %d: unexpected error %v", i, op.Err)
			}
			if op.Result.Outcome != o || op.Result.Replay != replay || op.IntroReady != ready || op.FirstIntro != first {
				t.Fatalf("op %d: %v replay=%v ready=%v first=%v; want %v %v %v %v", i,
					op.Result.Outcome, op.Result.Replay, op.IntroReady, op.FirstIntro, o, replay, ready, first)
			}
		}
		wantOp(0, engine.Success, false, false, false)
		if ops[0].PresenceView.NPending != 1 || ops[0].PresenceView.Pending[0] != a.Handle || ops[0].PresenceView.Listing != v.ID {
			t.Fatalf("op 0 presence view wrong")
		}
		wantOp(1, engine.Conflict, false, false, false)
		wantOp(2, engine.Success, false, false, false)
		wantOp(3, engine.Success, false, true, true)
		wantIntro := engine.Introduction{Attempt: a.ID, Handle: a.Handle,
			Host:   engine.Binding{Public: host.Public, Local: host.Local},
			Client: engine.Binding{Public: client.Public}}
		if ops[3].Intro != wantIntro || ops[4].Intro != wantIntro {
			t.Fatalf("batched introductions differ from the bound endpoints")
		}
		wantOp(4, engine.Success, true, true, false)
		e.wantInput("batched presence with no public endpoint", ops[5].Err, "public", "endpoint", "addr")
		wantOp(6, engine.NotFound, false, false, false)
		wantOp(7, engine.Success, false, false, false)
		if ops[7].PresenceView.NPending != 1 || ops[7].PresenceView.Pending[0] != b.Handle {
			t.Fatalf("op 7 presence view wrong")
		}
		wantOp(8, engine.ReplayRejected, false, false, false)
		wantOp(9, engine.Success, false, false, false)
		if ops[9].PresenceView.NPending != 0 {
			t.Fatalf("op 9: host-bound attempt still pending")
		}
		var ie *engine.InputError
		if !asInput(ops[10].Err, &ie) {
			t.Fatalf("op 10 (unknown kind): error %v, want *engine.InputError", ops[10].Err)
		}
		wantOp(11, engine.Success, false, false, false)
		// The batch's effects are those of the ops applied in order.
		g := e.wantGet(v.ID, true, engine.Success)
		if g.HostPublic != pub(40004) {
			t.Fatalf("last accepted heartbeat not in effect")
		}
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction after batch", r, err, engine.ReplayRejected)
		if st := e.s.Stats(); st.InFlight != 1 {
			t.Fatalf("InFlight = %d, want 1", st.InFlight)
		}
		// The invalid and unknown ops changed nothing: seq 4 is still free.
		e.presence(v, 4, pub(40005))
	})

	t.Run("EmptyAndRepeated", func(t *testing.T) {
		e := newEnv(t, f)
		if err := e.s.ApplyBatch(e.ctx, nil); err != nil {
			t.Fatalf("empty ApplyBatch: %v", err)
		}
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		// Both binds of one attempt repeated in one batch: one FirstIntro.
		host := e.bindCmd(a, engine.RoleHost, pub(10), netipZero)
		client := e.bindCmd(a, engine.RoleClient, pub(20), netipZero)
		ops := make([]engine.Op, 0, 64)
		for i := 0; i < 32; i++ {
			ops = append(ops, engine.Op{Kind: engine.OpBindAttempt, Bind: host}, engine.Op{Kind: engine.OpBindAttempt, Bind: client})
		}
		if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
			t.Fatal(err)
		}
		first := 0
		for i := range ops {
			if !ops[i].Result.OK() {
				t.Fatalf("op %d: %v", i, ops[i].Result.Outcome)
			}
			if ops[i].FirstIntro {
				first++
				if i != 1 {
					t.Fatalf("FirstIntro on op %d, want op 1", i)
				}
			}
			if i >= 1 && !ops[i].IntroReady {
				t.Fatalf("op %d: IntroReady false after both sides bound", i)
			}
		}
		if first != 1 {
			t.Fatalf("FirstIntro set %d times, want once", first)
		}
		// A batch of 64 heartbeats with rising sequence numbers: all accepted.
		ops = ops[:0]
		for i := 0; i < 64; i++ {
			ops = append(ops, engine.Op{Kind: engine.OpPresence, Presence: e.presenceCmd(v, uint64(10+i), pub(uint16(1000+i)))})
		}
		if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
			t.Fatal(err)
		}
		for i := range ops {
			if !ops[i].Result.OK() || ops[i].Err != nil {
				t.Fatalf("heartbeat %d: %v %v", i, ops[i].Result.Outcome, ops[i].Err)
			}
		}
		if g := e.wantGet(v.ID, true, engine.Success); g.HostPublic != pub(1063) {
			t.Fatalf("last heartbeat of the batch not in effect")
		}
	})
}
