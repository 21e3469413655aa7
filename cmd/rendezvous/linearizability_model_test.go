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

const initialPlayers = 1

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
		return out.Intro == want, s
	}
	return false, s
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
	return out.Code == 200 && out.ID1 == s.listing && out.ID2 == s.lease && out.ID3 == s.presence &&
		out.Version == s.version, s
}

func stepJoin(s slotState, in linInput, out linOutput) (bool, slotState) {
	if ai := s.joinRec[in.Key]; ai >= 0 {
		a := s.att[ai]
		if !a.exists {
			return out.Code == 410, s
		}
		return out.Code == 200 && out.ID1 == a.id && out.ID2 == a.handle, s
	}
	if !s.exists || !s.fresh {
		return out.Code == 404, s
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
	var want [4]string
	n := 0
	for i := 0; i < int(s.n) && n < len(want); i++ {
		if a := s.att[i]; a.exists && a.bound[roleHostIdx] < 0 {
			want[n] = a.handle
			n++
		}
	}
	return out.Code == 200 && out.NPending == n && out.Pending == want, s
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
