package main

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// The datagrams the load tester sends and how it classifies the answers
// (docs/contracts/udp.md), on the project's STUN codec (netio/stun). The wire's
// independent oracle is pion/stun in the tests, not this tester.

// stunRequest describes one authenticated Binding request: a presence
// refresh (Kind stun.KindPresence, with a Sequence) or an attempt bind
// (stun.KindAttemptHost or stun.KindAttemptClient). Key points at the
// signing capability, which the request does not own.
type stunRequest struct {
	TxID     [12]byte
	Kind     byte
	Handle   engine.Handle
	Key      *engine.Capability
	Sequence uint64         // presence only; 0 means absent
	Local    netip.AddrPort // RDV-LOCAL-ADDRESS; invalid means absent
}

// Encode writes the request into buf's capacity (udpMaxReq bytes suffice:
// the largest, with an IPv6 local address, is 164) and returns it, aliasing
// buf. It does not allocate; a buffer too small is a BUG.
func (r *stunRequest) Encode(buf []byte) []byte {
	b := stun.NewBuilder(buf, stun.BindingRequest, r.TxID)
	u := stun.Username(r.Kind, r.Handle)
	b.AddUsername(u[:])
	if r.Sequence != 0 {
		b.AddUint64(stun.AttrSequence, r.Sequence)
	}
	if r.Local.IsValid() {
		b.AddXORAddress(stun.AttrLocalAddress, r.Local)
	}
	b.AddIntegritySHA256(r.Key[:])
	b.AddFingerprint()
	if err := b.Err(); err != nil {
		panic("BUG: cannot encode a request: " + err.Error())
	}
	return b.Bytes()
}

// encodePlainBinding writes an unauthenticated Binding request with
// FINGERPRINT (what any STUN client sends) into buf's capacity.
func encodePlainBinding(buf []byte, tx [12]byte) []byte {
	b := stun.NewBuilder(buf, stun.BindingRequest, tx)
	b.AddFingerprint()
	if err := b.Err(); err != nil {
		panic("BUG: cannot encode a Binding request: " + err.Error())
	}
	return b.Bytes()
}

// isAnswer reports whether m is a Binding success or error response (as
// opposed to an indication or anything else).
func isAnswer(m *stun.Message) bool {
	return m.Type() == stun.BindingSuccess || m.Type() == stun.BindingError
}

// answerCode classifies a Binding response: a success is CodeOK, an error
// by its ERROR-CODE, and an error response without a valid ERROR-CODE is
// CodeOtherStatus.
func answerCode(m *stun.Message) Code {
	if m.Type() == stun.BindingSuccess {
		return CodeOK
	}
	code, _, ok := m.ErrorCode()
	if !ok {
		return CodeOtherStatus
	}
	return stunCode(code)
}
