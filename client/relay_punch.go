package client

import (
	"context"
	"net/netip"
	"time"
)

// relayPunch connects through the TURN relay: it gets this side's relay
// object, allocates, binds the attempt again with the relayed address, waits
// for the peer's relayed address (RELAY-INTRODUCE) and probes it through
// the relay. Getting the relay object and the allocation are bounded by
// timeout; so is the wait for the peer after a failed direct punch (the
// peer falls back at about the same time), while a relay-only attempt waits
// for the peer until the attempt ends, as a bind does. The probing is
// bounded by timeout too.
func relayPunch(ctx context.Context, s *Socket, side *attemptSide, role Role, timeout, interval time.Duration) (Path, error) {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := side.relay(actx)
	if err != nil {
		return Path{}, err
	}
	a, err := allocateRelay(actx, r)
	if err != nil {
		return Path{}, err
	}
	deadline := side.deadline
	if end := start.Add(timeout); !side.relayOnly && end.Before(deadline) {
		deadline = end
	}
	b, err := s.bind(ctx, side.kind, side.h, side.key, side.local, a.addr, deadline)
	if err != nil {
		a.close()
		return Path{}, err
	}
	peer := b.intro.Relayed
	if err := s.addRelay(peer, a); err != nil {
		a.close()
		return Path{}, err
	}
	pctx, pcancel := context.WithTimeout(ctx, timeout)
	defer pcancel()
	// The first probe installs the relay's permission for the peer.
	first := func(probe []byte) error { return a.permit(pctx, peer, probe) }
	p, err := probePath(pctx, s, side.h, role, []netip.AddrPort{peer}, a, timeout, interval, first)
	if err != nil {
		s.removeRelay(peer, a)
		if pe, ok := err.(*PunchError); ok {
			pe.Relayed = true
		} else if ctx.Err() == nil && pctx.Err() != nil {
			// The permission was still pending at the timeout.
			return Path{}, &PunchError{Candidates: []netip.AddrPort{peer}, Timeout: timeout, Relayed: true}
		}
		return Path{}, err
	}
	p.Relayed = true
	p.Elapsed = time.Since(start) // allocation, relay introduction and probing
	return p, nil
}
