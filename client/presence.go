package client

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// ErrMediatorTimeout: the mediator answered none of the tries of a request.
var ErrMediatorTimeout = errors.New("rendezvous: mediator did not answer")

// appendPresence encodes a presence refresh (docs/contracts/udp.md#presence-refresh) into buf,
// which must hold stun.MaxDatagram bytes. Zero allocations.
func appendPresence(buf []byte, txID [12]byte, h engine.Handle, key *engine.Capability, seq uint64, local netip.AddrPort) []byte {
	b := newRequest(buf, txID, stun.KindPresence, h)
	b.AddUint64(stun.AttrSequence, seq)
	if local.IsValid() {
		b.AddXORAddress(stun.AttrLocalAddress, local)
	}
	return seal(&b, key)
}

// appendBind encodes an attempt bind (docs/contracts/udp.md#attempt-bind) for kind 'h' or
// 'c', with the side's relayed address on its TURN relay when it has one.
func appendBind(buf []byte, txID [12]byte, kind byte, h engine.Handle, key *engine.Capability, local, relayed netip.AddrPort) []byte {
	b := newRequest(buf, txID, kind, h)
	if local.IsValid() {
		b.AddXORAddress(stun.AttrLocalAddress, local)
	}
	if relayed.IsValid() {
		b.AddXORAddress(stun.AttrRelayedAddress, relayed)
	}
	return seal(&b, key)
}

// newRequest starts a Binding request into buf whose USERNAME names h for
// kind (docs/contracts/udp.md#authentication); seal ends it.
func newRequest(buf []byte, txID [12]byte, kind byte, h engine.Handle) stun.Builder {
	b := stun.NewBuilder(buf, stun.BindingRequest, txID)
	u := stun.Username(kind, h)
	b.AddUsername(u[:])
	return b
}

// seal ends a request with its MESSAGE-INTEGRITY-SHA256 under key and its
// FINGERPRINT, and returns its bytes.
func seal(b *stun.Builder, key *engine.Capability) []byte {
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

// presenceState is the host's heartbeat: handle, capability and the last
// sequence sent. Owned by the Publisher's loop goroutine.
type presenceState struct {
	handle engine.Handle
	key    engine.Capability
	// seq counts from 1 for each listing, so it never nears the server's
	// bound (engine.MaxPresenceSeq, 2^53-1) above which it answers 400.
	seq   uint64
	local netip.AddrPort
	buf   [stun.MaxDatagram]byte
}

// refresh sends presence refreshes until one is answered (at most tries,
// each with a fresh, higher sequence so a lost answer never makes the retry
// stale), starting with rto and doubling. The answer's pending attempts are
// pushed as offers.
func (s *Socket) refresh(ctx context.Context, p *presenceState, tries int, rto time.Duration) (answer, error) {
	for range tries {
		p.seq++
		txID := newTxID()
		req := appendPresence(p.buf[:0], txID, p.handle, &p.key, p.seq, p.local)
		if req == nil {
			panic("BUG: presence request does not fit a datagram")
		}
		a, ok, err := s.exchange(ctx, txID, &p.key, req, rto)
		if err != nil {
			return a, err
		}
		if !ok {
			rto *= 2
			continue
		}
		if err := a.err("presence"); err != nil {
			return a, err
		}
		for _, h := range a.attempts[:a.nattempts] {
			s.pushOffer(h)
		}
		return a, nil
	}
	return answer{}, ErrMediatorTimeout
}
