package client

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// bindBackoff paces bind retransmissions while waiting for INTRODUCE.
var bindBackoff = Backoff{Min: 250 * time.Millisecond, Max: 2 * time.Second}

// bound is how a bind ended: an introduction (INTRODUCE, or with relayed
// set, RELAY-INTRODUCE: intro.Relayed is the peer's relayed address), or
// relayOnly: the mediator answered that the attempt is relay-only and this
// bind carried no relayed address, so there is nothing to wait for yet.
type bound struct {
	intro     Introduction
	relayOnly bool
}

// bind binds this Socket's endpoint to an attempt (kind 'h' host, 'c' client)
// and waits for the mediator's introduction, retransmitting the identical
// request with jittered backoff (identical retransmissions are idempotent,
// docs/contracts/semantics.md#attempt-binding, and one after the introduction
// was consumed gets the same introduction again). Without relayed it waits for
// INTRODUCE (or returns at once when the answer says relay-only); with relayed
// (the side's address on its TURN relay, RDV-RELAYED-ADDRESS) it waits for
// RELAY-INTRODUCE. It ends with a typed mediator error (the attempt is gone:
// ErrNotFound; another endpoint bound first: ErrConflict), ErrIntroduceTimeout
// at deadline, or ctx's error.
func (s *Socket) bind(ctx context.Context, kind byte, h engine.Handle, key engine.Capability, local, relayed netip.AddrPort, deadline time.Time) (bound, error) {
	slot := s.registerIntro(h, kind, key)
	defer s.unregisterIntro(h)
	txID := newTxID()
	w := s.acquireWaiter(txID, &key)
	if w == nil {
		return bound{}, &ConfigError{Field: "socket", Reason: "too many concurrent mediator requests"}
	}
	defer s.releaseWaiter(w)
	var buf [stun.MaxDatagram]byte
	req := appendBind(buf[:0], txID, kind, h, &key, local, relayed)
	if req == nil {
		panic("BUG: bind request does not fit a datagram")
	}
	intros := slot.ch
	if relayed.IsValid() {
		intros = nil // only the relay introduction is awaited
	}
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	bo := bindBackoff
	answered := false
	for {
		if _, err := s.conn.WriteToUDPAddrPort(req, s.Mediator()); err != nil && !isConnRefused(err) {
			return bound{}, fmt.Errorf("rendezvous: bind: cannot send: %w", err)
		}
		d, _ := bo.Next()
		retry := time.NewTimer(d)
	wait:
		for {
			select {
			case in := <-intros:
				retry.Stop()
				return bound{intro: in}, nil
			case peer := <-slot.relay:
				retry.Stop()
				return bound{intro: Introduction{Attempt: Handle(h.UUID), Relayed: peer}}, nil
			case a := <-w.ch:
				if err := a.err("bind"); err != nil {
					retry.Stop()
					return bound{}, err
				}
				if a.relayOnly && !relayed.IsValid() {
					retry.Stop()
					return bound{relayOnly: true}, nil
				}
				answered = true // now only the introduction is awaited
			case <-retry.C:
				break wait
			case <-end.C:
				retry.Stop()
				if answered {
					return bound{}, fmt.Errorf("%w (bound; the other side never bound)", ErrIntroduceTimeout)
				}
				return bound{}, fmt.Errorf("%w (the mediator never answered the bind)", ErrIntroduceTimeout)
			case <-ctx.Done():
				retry.Stop()
				return bound{}, ctx.Err()
			case <-s.done:
				retry.Stop()
				return bound{}, ErrClosed
			}
		}
	}
}
