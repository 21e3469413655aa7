package client

import (
	"context"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// attemptSide is what one side keeps of its attempt after the introduction:
// enough to bind again with a relayed address (the relay fallback) and to
// report its outcome once.
type attemptSide struct {
	kind     byte      // stun.KindAttemptHost or stun.KindAttemptClient
	id       AttemptID // the client side's attempt ID (API.AttemptStatus); zero on the host side, which never learns it
	h        engine.Handle
	key      engine.Capability
	local    netip.AddrPort
	deadline time.Time // the attempt's end
	start    time.Time // when this side joined: the outcome's time to connect counts from here
	// relayOnly: the attempt never connects directly.
	relayOnly bool
	// relay fetches this side's relay object; nil when none was granted.
	relay    func(ctx context.Context) (*Relay, error)
	reported atomic.Bool
}

// Outcome report retransmission: a few tries, each answered within rto.
const (
	outcomeTries = 3
	outcomeRTO   = 250 * time.Millisecond
)

// reportOutcome tells the mediator how this side's connection ended (path
// stun.PathDirect, PathRelayed or PathFailed, with the time since the side
// joined), once per attempt: retransmissions of the one report are
// idempotent. Best effort: a lost report changes nothing for the peers.
func (s *Socket) reportOutcome(ctx context.Context, side *attemptSide, path byte) {
	if side == nil || !side.reported.CompareAndSwap(false, true) {
		return
	}
	ms := time.Since(side.start).Milliseconds()
	txID := newTxID()
	var buf [stun.MaxDatagram]byte
	b := newRequest(buf[:0], txID, side.kind, side.h)
	b.AddOutcome(path, uint32(min(ms, 1<<32-1)))
	req := seal(&b, &side.key)
	for range outcomeTries {
		if _, ok, err := s.exchange(ctx, txID, &side.key, req, outcomeRTO); ok || err != nil {
			return
		}
	}
}
