package main

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

// TestLinearizabilityModelRejects shows the model is strict enough to
// catch the bugs the check is for: each hand-made history below is what a
// broken store would answer, and porcupine must call it illegal, while the
// same history answered correctly is linearizable.
func TestLinearizabilityModelRejects(t *testing.T) {
	type step struct {
		call, ret int64
		in        linInput
		out       linOutput
	}
	check := func(m porcupine.Model, name string, want porcupine.CheckResult, steps ...step) {
		t.Helper()
		ops := make([]porcupine.Operation, len(steps))
		for i, s := range steps {
			ops[i] = porcupine.Operation{ClientId: i, Input: s.in, Call: s.call, Output: s.out, Return: s.ret}
		}
		if got := porcupine.CheckOperations(m, ops) == (want == porcupine.Ok); !got {
			t.Errorf("%s: porcupine disagrees, want %s", name, want)
		}
	}
	f := func(name string, want porcupine.CheckResult, steps ...step) {
		t.Helper()
		check(linModel, name, want, steps...)
	}
	at := func(call, ret int64, in linInput, out linOutput) step { return step{call, ret, in, out} }
	create := linInput{Kind: opCreate}
	created := linOutput{Code: 201, ID1: "L", ID2: "lease", ID3: "P", Version: 1}
	presence := func(seq uint64) linInput { return linInput{Kind: opPresence, Seq: seq} }
	fresh := linOutput{Code: 200}
	join := linInput{Kind: opJoin, Key: 0}
	joined := linOutput{Code: 201, ID1: "A", ID2: "H"}
	bind := func(role, sock int) linInput { return linInput{Kind: opBind, Key: 0, Role: role, Sock: sock} }
	ok := linOutput{Code: 200}
	observe := linInput{Kind: opObserve}
	intro := func(host, client uint8) linOutput {
		var c introCounts
		c[0][roleHostIdx][0][0] = host // host socket 0, naming client socket 0
		c[0][roleClientIdx][0][0] = client
		return linOutput{Code: 200, Intro: c}
	}
	setup := []step{at(0, 1, create, created), at(2, 3, presence(1), fresh), at(4, 5, join, joined)}
	with := func(more ...step) []step { return append(append([]step(nil), setup...), more...) }

	// One introduction per side: linearizable.
	f("introduced once", porcupine.Ok, with(at(6, 7, bind(0, 0), ok), at(8, 9, bind(1, 0), ok), at(10, 11, observe, intro(1, 1)))...)
	// The consumption happened twice: the host got a second INTRODUCE
	// without sending a second bind.
	f("double introduction", porcupine.Illegal, with(at(6, 7, bind(0, 0), ok), at(8, 9, bind(1, 0), ok), at(10, 11, observe, intro(2, 1)))...)
	// A retransmitted host bind after the introduction gets it again.
	f("re-sent to the requester", porcupine.Ok, with(at(6, 7, bind(0, 0), ok), at(8, 9, bind(1, 0), ok), at(10, 11, bind(0, 0), ok),
		at(12, 13, observe, intro(2, 1)))...)
	// Two clients racing from different sockets cannot both win.
	f("two winners", porcupine.Illegal, with(at(6, 9, bind(1, 0), ok), at(7, 8, bind(1, 1), ok))...)
	f("one winner", porcupine.Ok, with(at(6, 9, bind(1, 0), ok), at(7, 8, bind(1, 1), linOutput{Code: 409}))...)
	// A stale presence sequence accepted.
	// The refresh lists the attempt as pending until its host binds.
	pending := linOutput{Code: 200, Pending: [4]string{"H"}, NPending: 1}
	f("stale sequence accepted", porcupine.Illegal, with(at(6, 7, presence(3), pending), at(8, 9, presence(2), pending))...)
	f("stale sequence refused", porcupine.Ok, with(at(6, 7, presence(3), pending), at(8, 9, presence(2), linOutput{Code: 409}))...)
	f("pending after the host bound", porcupine.Illegal, with(at(6, 7, bind(0, 0), ok), at(8, 9, presence(2), pending))...)
	// Concurrent renewals with the same expected version: one wins.
	renew := linInput{Kind: opRenew, Expect: 1, Players: -1}
	f("lost update", porcupine.Illegal, at(0, 1, create, created), at(2, 5, renew, linOutput{Code: 200, Version: 2}),
		at(3, 4, renew, linOutput{Code: 200, Version: 2}))
	f("compare-and-swap", porcupine.Ok, at(0, 1, create, created), at(2, 5, renew, linOutput{Code: 200, Version: 2}),
		at(3, 4, renew, linOutput{Code: 409, Version: 2}))
	// Racing creations with one key: one listing.
	f("two creations", porcupine.Illegal, at(0, 3, create, created), at(1, 2, create, created))
	f("creation and replay", porcupine.Ok, at(0, 3, create, created), at(1, 2, create, linOutput{Code: 200, ID1: "L", ID2: "lease", ID3: "P", Version: 1}))
	// A join after the delete returned.
	f("join after delete", porcupine.Illegal, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, 5, linInput{Kind: opDelete}, linOutput{Code: 204}), at(6, 7, join, joined))
	// A join to a listing its host reported full, and the join once a
	// renewal made room.
	full := linInput{Kind: opRenew, Expect: 1, Players: maxPlayers}
	f("join to a full listing", porcupine.Illegal, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, 5, full, linOutput{Code: 200, Version: 2}), at(6, 7, join, joined))
	f("full listing refused", porcupine.Ok, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, 5, full, linOutput{Code: 200, Version: 2}), at(6, 7, join, linOutput{Code: 409}),
		at(8, 9, linInput{Kind: opRenew, Expect: 2, Players: 3}, linOutput{Code: 200, Version: 3}), at(10, 11, join, joined))
	// A read that misses a completed renewal's player count.
	f("stale read", porcupine.Illegal, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, 5, linInput{Kind: opRenew, Expect: 1, Players: 5}, linOutput{Code: 200, Version: 2}),
		at(6, 7, linInput{Kind: opGet}, linOutput{Code: 200, Players: initialPlayers}))

	// With a fault (linFaultModel): an unanswered operation returns at the
	// end of the history (end) and may or may not have happened; an
	// observation after it may miss INTRODUCEs, never count extra ones.
	const end = 100
	ff := func(name string, want porcupine.CheckResult, steps ...step) {
		t.Helper()
		check(linFaultModel, name, want, steps...)
	}
	lost := linOutput{Unknown: true}
	lossy := linInput{Kind: opObserve, Lossy: true}
	players5 := linInput{Kind: opRenew, Expect: 1, Players: 5}
	get := linInput{Kind: opGet}
	ff("unanswered renewal happened", porcupine.Ok, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, end, players5, lost), at(6, 7, get, linOutput{Code: 200, Players: 5}))
	ff("unanswered renewal did not happen", porcupine.Ok, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, end, players5, lost), at(6, 7, get, linOutput{Code: 200, Players: initialPlayers}))
	ff("a value nobody wrote", porcupine.Illegal, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, end, players5, lost), at(6, 7, get, linOutput{Code: 200, Players: 7}))
	ff("unanswered renewal happened, then undone", porcupine.Illegal, at(0, 1, create, created), at(2, 3, presence(1), fresh),
		at(4, end, players5, lost), at(6, 7, get, linOutput{Code: 200, Players: 5}), at(8, 9, get, linOutput{Code: 200, Players: initialPlayers}))
	ff("unanswered host bind consumed", porcupine.Ok, with(at(6, end, bind(0, 0), lost), at(8, 9, bind(1, 0), ok), at(10, 11, lossy, intro(1, 1)))...)
	ff("an introduction lost with the instance", porcupine.Ok, with(at(6, end, bind(0, 0), lost), at(8, 9, bind(1, 0), ok), at(10, 11, lossy, intro(0, 1)))...)
	ff("double introduction after a fault", porcupine.Illegal, with(at(6, end, bind(0, 0), lost), at(8, 9, bind(1, 0), ok), at(10, 11, lossy, intro(2, 1)))...)
	ff("unanswered creation learnt from its replay", porcupine.Ok, at(0, end, create, lost),
		at(2, 3, create, linOutput{Code: 200, ID1: "L", ID2: "lease", ID3: "P", Version: 1}),
		at(4, 5, create, linOutput{Code: 200, ID1: "L", ID2: "lease", ID3: "P", Version: 1}))
	ff("two listings behind one key after a fault", porcupine.Illegal, at(0, end, create, lost),
		at(2, 3, create, linOutput{Code: 200, ID1: "L", ID2: "lease", ID3: "P", Version: 1}),
		at(4, 5, create, linOutput{Code: 200, ID1: "M", ID2: "lease", ID3: "P", Version: 1}))
}
