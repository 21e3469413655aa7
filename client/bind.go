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

// bind binds this Socket's endpoint to an attempt (kind 'h' host, 'c'
// client) and waits for the mediator's INTRODUCE, retransmitting the identical
// request with jittered backoff (identical retransmissions are idempotent,
// CONTRACT.md §7.3, and one after the introduction was consumed gets the same
// INTRODUCE again). It ends with the introduction, a typed mediator error
// (the attempt is gone: ErrNotFound; another endpoint bound first:
// ErrConflict), ErrIntroduceTimeout at deadline, or ctx's error.
func (s *Socket) bind(ctx context.Context, kind byte, h engine.Handle, key engine.Capability, local netip.AddrPort, deadline time.Time) (Introduction, error) {
	slot := s.registerIntro(h, kind, key)
	defer s.unregisterIntro(h)
	txID := newTxID()
	w := s.acquireWaiter(txID, &key)
	if w == nil {
		return Introduction{}, &ConfigError{Field: "socket", Reason: "too many concurrent mediator requests"}
	}
	defer s.releaseWaiter(w)
	var buf [stun.MaxDatagram]byte
	req := appendBind(buf[:0], txID, kind, h, &key, local)
	if req == nil {
		panic("BUG: bind request does not fit a datagram")
	}
	end := time.NewTimer(time.Until(deadline))
	defer end.Stop()
	bo := bindBackoff
	bound := false
	for {
		if _, err := s.conn.WriteToUDPAddrPort(req, s.Mediator()); err != nil && !isConnRefused(err) {
			return Introduction{}, fmt.Errorf("rendezvous: bind: cannot send: %w", err)
		}
		d, _ := bo.Next()
		retry := time.NewTimer(d)
	wait:
		for {
			select {
			case in := <-slot.ch:
				retry.Stop()
				return in, nil
			case a := <-w.ch:
				if err := a.err("bind"); err != nil {
					retry.Stop()
					return Introduction{}, err
				}
				bound = true // now only the INTRODUCE is awaited
			case <-retry.C:
				break wait
			case <-end.C:
				retry.Stop()
				if bound {
					return Introduction{}, fmt.Errorf("%w (bound; the other side never bound)", ErrIntroduceTimeout)
				}
				return Introduction{}, fmt.Errorf("%w (the mediator never answered the bind)", ErrIntroduceTimeout)
			case <-ctx.Done():
				retry.Stop()
				return Introduction{}, ctx.Err()
			case <-s.done:
				retry.Stop()
				return Introduction{}, ErrClosed
			}
		}
	}
}
