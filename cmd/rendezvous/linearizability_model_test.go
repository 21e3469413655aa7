package main

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The sequential specification the linearizability check holds the real
// server to (docs/reliability.md). The store is one atomic object; its
// history is partitioned by listing slot: a slot is one creation
// idempotency key and everything done to the listing it creates (lease,
// presence, attempts, binds, introductions). Slots share nothing the model
// depends on (ceilings and quotas are set far above what a run uses, and
// lifetimes far above its length), so the history is linearizable exactly
// when each slot's is.
//
// State values are comparable structs (no maps or slices), so porcupine's
// default == equality and its memoisation work on them.

// Bounds of one slot.
const (
	linJoinKeys = 4 // join idempotency keys per slot: at most 4 attempts
	linSocks    = 2 // bind sockets per role
)

// Peer roles in an attempt, as indices.
const (
	roleHostIdx   = 0
	roleClientIdx = 1
)

type linKind uint8

const (
	opCreate linKind = iota + 1
	opRenew
	opDelete
	opGet
	opBrowse
	opJoin
	opPresence
	opBind
	opObserve
)

func (k linKind) String() string {
	return [...]string{"?", "create", "renew", "delete", "get", "browse", "join", "presence", "bind", "observe"}[k]
}

// linInput is one operation's input. Only the fields of its kind are set.
type linInput struct {
	Slot    int
	Kind    linKind
	Body    int    // create: which of the two request bodies (same key)
	Expect  uint64 // renew: expected_version
	Players int    // renew: current_players, -1 to leave it
	Key     int    // join, bind: join idempotency key index
	Seq     uint64 // presence: RDV-SEQUENCE
	Role    int    // bind: roleHostIdx or roleClientIdx
	Sock    int    // bind: which of the role's sockets sent it
	// observe: INTRODUCEs may have been lost (a fault killed an instance
	// that had one to send), so each count may be below the model's, never
	// above it.
	Lossy bool
}

// introCounts counts INTRODUCE datagrams per join key, recipient role,
// recipient socket and the peer socket the INTRODUCE names (index linSocks:
// an endpoint that is neither of the other role's sockets).
type introCounts [linJoinKeys][2][linSocks][linSocks + 1]uint8

// linOutput is what the server answered. Code is the HTTP status or the
// STUN answer (200 success, else the ERROR-CODE).
type linOutput struct {
	Code int
	// create: the IDs made; join: AttemptID in ID1, handle in ID2.
	ID1, ID2, ID3 string
	Version       uint64 // create (lease.version), renew (version or current_version)
	Players       int    // get, browse
	Items         int    // browse: items in the slot's region
	Pending       [4]string
	NPending      int
	Intro         introCounts // observe
	// Unknown: no answer came (the instance it went to was killed): the
	// operation may or may not have taken effect; see linFaultModel.
	Unknown bool
}

type attemptState struct {
	id, handle string
	exists     bool
	bound      [2]int8 // per role: bound socket, -1 unbound
	consumed   bool
}

// slotState is the store as far as one slot can see it.
type slotState struct {
	recBody  int8 // body recorded under the creation key, -1 none
	exists   bool
	listing  string
	lease    string
	presence string
	version  uint64
	players  int
	fresh    bool
	lastSeq  uint64
	n        int8 // attempts created
	att      [linJoinKeys]attemptState
	joinRec  [linJoinKeys]int8 // attempt index a join key created, -1 none
	intro    introCounts
}

// initialPlayers and maxPlayers are every listing's at creation; a renewal
// may fill it (players 0..8), and a join to a full listing is 409
// listing_full.
const (
	initialPlayers = 1
	maxPlayers     = 8
)

func initSlot() slotState {
	s := slotState{recBody: -1}
	for i := range s.joinRec {
		s.joinRec[i] = -1
	}
	return s
}

// stepSlot is the sequential specification: whether the server may answer
// in with out from state s, and the state after.
func stepSlot(s slotState, in linInput, out linOutput) (bool, slotState) {
	switch in.Kind {
	case opCreate:
		return stepCreate(s, in, out)
	case opRenew:
		switch {
		case !s.exists:
			return out.Code == 404, s
		case in.Expect != s.version:
			return out.Code == 409 && out.Version == s.version, s
		}
		s.version++
		if in.Players >= 0 {
			s.players = in.Players
		}
		return out.Code == 200 && out.Version == s.version, s
	case opDelete:
		if !s.exists {
			return out.Code == 404, s
		}
		s.exists, s.fresh = false, false
		for i := range s.att {
			s.att[i].exists = false
		}
		return out.Code == 204, s
	case opGet:
		if !s.exists || !s.fresh {
			return out.Code == 404, s
		}
		return out.Code == 200 && out.Players == s.players, s
	case opBrowse:
		if !s.exists || !s.fresh {
			return out.Code == 200 && out.Items == 0, s
		}
		return out.Code == 200 && out.Items == 1 && out.Players == s.players, s
	case opJoin:
		return stepJoin(s, in, out)
	case opPresence:
		return stepPresence(s, in, out)
	case opBind:
		return stepBind(s, in, out)
	case opObserve:
		var want introCounts
		for k, ai := range s.joinRec {
			if ai >= 0 {
				want[k] = s.intro[ai]
			}
		}
		if in.Lossy {
			return atMost(out.Intro, want), s
		}
		return out.Intro == want, s
	}
	return false, s
}

// atMost reports whether every count of got is at most its count in want.
func atMost(got, want introCounts) bool {
	g, w := flatten(got), flatten(want)
	for i := range g {
		if g[i] > w[i] {
			return false
		}
	}
	return true
}

// unknownID stands for an ID the model has not seen because the operation
// that made it went unanswered; the first answer naming it fills it in.
const unknownID = "?"

// sameID reports whether got is the ID *want names, learning it when
// *want is unknownID.
func sameID(want *string, got string) bool {
	if *want == unknownID && got != "" {
		*want = got
	}
	return *want == got
}

func stepCreate(s slotState, in linInput, out linOutput) (bool, slotState) {
	switch {
	case s.recBody < 0:
		if out.Code != 201 || out.Version != 1 || out.ID1 == "" {
			return false, s
		}
		s.recBody, s.exists = int8(in.Body), true
		s.listing, s.lease, s.presence = out.ID1, out.ID2, out.ID3
		s.version, s.players = 1, initialPlayers
		return true, s
	case int(s.recBody) != in.Body:
		return out.Code == 409, s
	case !s.exists:
		return out.Code == 410, s
	}
	return out.Code == 200 && sameID(&s.listing, out.ID1) && sameID(&s.lease, out.ID2) && sameID(&s.presence, out.ID3) &&
		out.Version == s.version, s
}

func stepJoin(s slotState, in linInput, out linOutput) (bool, slotState) {
	if ai := s.joinRec[in.Key]; ai >= 0 {
		a := &s.att[ai]
		if !a.exists {
			return out.Code == 410, s
		}
		return out.Code == 200 && sameID(&a.id, out.ID1) && sameID(&a.handle, out.ID2), s
	}
	if !s.exists || !s.fresh {
		return out.Code == 404, s
	}
	if s.players >= maxPlayers {
		return out.Code == 409, s
	}
	if out.Code != 201 || out.ID2 == "" || int(s.n) >= linJoinKeys {
		return false, s
	}
	s.att[s.n] = attemptState{id: out.ID1, handle: out.ID2, exists: true, bound: [2]int8{-1, -1}}
	s.joinRec[in.Key] = s.n
	s.n++
	return true, s
}

func stepPresence(s slotState, in linInput, out linOutput) (bool, slotState) {
	switch {
	case !s.exists:
		return out.Code == 404, s
	case in.Seq <= s.lastSeq:
		return out.Code == 409, s
	}
	s.lastSeq, s.fresh = in.Seq, true
	// Pending: attempts whose host endpoint is not bound, oldest first, at
	// most 4.
	n := 0
	for i := 0; i < int(s.n) && n < len(out.Pending); i++ {
		if a := &s.att[i]; a.exists && a.bound[roleHostIdx] < 0 {
			if !sameID(&a.handle, out.Pending[n]) {
				return false, s
			}
			n++
		}
	}
	for _, h := range out.Pending[n:] {
		if h != "" {
			return false, s
		}
	}
	return out.Code == 200 && out.NPending == n, s
}

// stepBind: the first endpoint per role wins, the identical one again is
// an idempotent success, another is 409. When both are bound, the first
// success consumes the introduction (an INTRODUCE to each side, naming the
// other) and every later one re-sends the requester's INTRODUCE only.
func stepBind(s slotState, in linInput, out linOutput) (bool, slotState) {
	ai := s.joinRec[in.Key]
	if ai < 0 {
		return false, s // the driver binds only attempts a join created
	}
	a := &s.att[ai]
	if !a.exists {
		// A host's key is derived from the attempt, so a gone attempt is an
		// unsigned 401, even when it vanished between the key lookup and the
		// commit; a client's key needs no lookup: a signed 404.
		if in.Role == roleHostIdx {
			return out.Code == 401, s
		}
		return out.Code == 404, s
	}
	switch a.bound[in.Role] {
	case -1:
		a.bound[in.Role] = int8(in.Sock)
	case int8(in.Sock):
	default:
		return out.Code == 409, s
	}
	other := 1 - in.Role
	if a.bound[other] >= 0 {
		s.intro[ai][in.Role][in.Sock][a.bound[other]]++
		if !a.consumed {
			a.consumed = true
			s.intro[ai][other][a.bound[other]][in.Sock]++
		}
	}
	return out.Code == 200, s
}

// linModel is the porcupine model over slots.
var linModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		bySlot := map[int][]porcupine.Operation{}
		var order []int
		for _, op := range history {
			k := op.Input.(linInput).Slot
			if _, ok := bySlot[k]; !ok {
				order = append(order, k)
			}
			bySlot[k] = append(bySlot[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, bySlot[k])
		}
		return out
	},
	Init: func() any { return initSlot() },
	Step: func(state, input, output any) (bool, any) {
		return stepSlot(state.(slotState), input.(linInput), output.(linOutput))
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		return describe(in, out)
	},
}

// describe renders an operation with only the fields of its kind.
func describe(in linInput, out linOutput) string {
	if out.Unknown {
		return fmt.Sprintf("%v -> no answer", in.Kind)
	}
	switch in.Kind {
	case opCreate:
		return fmt.Sprintf("create body %d -> %d %s v%d", in.Body, out.Code, out.ID1, out.Version)
	case opRenew:
		return fmt.Sprintf("renew expect %d players %d -> %d v%d", in.Expect, in.Players, out.Code, out.Version)
	case opGet, opBrowse:
		return fmt.Sprintf("%v -> %d items %d players %d", in.Kind, out.Code, out.Items, out.Players)
	case opJoin:
		return fmt.Sprintf("join key %d -> %d %s", in.Key, out.Code, out.ID2)
	case opPresence:
		return fmt.Sprintf("presence seq %d -> %d pending %v", in.Seq, out.Code, out.Pending[:out.NPending])
	case opBind:
		return fmt.Sprintf("bind key %d role %d sock %d -> %d", in.Key, in.Role, in.Sock, out.Code)
	case opObserve:
		return fmt.Sprintf("observe -> %v", out.Intro)
	}

	return fmt.Sprintf("%v -> %d", in.Kind, out.Code)
}

// linFaultModel is linModel for a history with unanswered operations.
// porcupine's way with an operation whose outcome is unknown: it gets the
// end of the history as its return time (the recorder sets it), so it may
// take effect at any point after its call, or never (linearized after
// everything, which no observation sees). Its output is Unknown, and the
// step may take either branch: nothing happened (or it failed, which
// changes nothing), or it succeeded, with IDs it made unknownID until a
// later answer names them. The power-set construction of
// porcupine.NondeterministicModel follows both.
var linFaultModel = (&porcupine.NondeterministicModel{
	Partition: linModel.Partition,
	Init:      func() []any { return []any{initSlot()} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(slotState), input.(linInput), output.(linOutput)
		if out.Unknown {
			return stepUnknown(s, in)
		}
		if ok, next := stepSlot(s, in, out); ok {
			return []any{next}
		}
		return nil
	},
	DescribeOperation: linModel.DescribeOperation,
}).ToModel()

// stepUnknown is the states after an unanswered operation in from s.
func stepUnknown(s slotState, in linInput) []any {
	var ok bool
	var next slotState
	switch in.Kind {
	case opCreate:
		ok, next = stepCreate(s, in, linOutput{Code: 201, Version: 1, ID1: unknownID, ID2: unknownID, ID3: unknownID})
	case opRenew:
		ok, next = stepSlot(s, in, linOutput{Code: 200, Version: s.version + 1})
	case opDelete:
		ok, next = stepSlot(s, in, linOutput{Code: 204})
	case opJoin:
		ok, next = stepJoin(s, in, linOutput{Code: 201, ID1: unknownID, ID2: unknownID})
	case opPresence:
		if s.exists && in.Seq > s.lastSeq {
			ok, next = true, s
			next.lastSeq, next.fresh = in.Seq, true
		}
	case opBind:
		ok, next = stepSlot(s, in, linOutput{Code: 200})
	}
	if ok && next != s {
		return []any{s, next}
	}
	return []any{s}
}
