package client

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
)

// Punch probes are the SDK's own peer-to-peer datagrams, never sent to the
// mediator. Layout (32 bytes):
//
//	0..3   "RDVP" (its first byte has the top bits 01, so it is never STUN)
//	4      type: 1 probe, 2 ack
//	5      sender's role: 'h' host, 'c' client
//	6..7   zero
//	8..23  the attempt handle both sides were introduced under
//	24..31 nonce: the prober's random nonce; an ack echoes it
//
// A side has a working path to its peer once an ack echoing its own nonce
// arrives: the probe went out and the ack came back along it. Each side
// confirms its own direction this way, so a path is confirmed both ways.
const (
	probeSize  = 32
	probeMagic = "RDVP"
	probeType  = 1
	ackType    = 2
)

func isProbe(b []byte) bool {
	return len(b) == probeSize && string(b[:4]) == probeMagic
}

func putProbe(b *[probeSize]byte, typ, role byte, h engine.Handle, nonce [8]byte) {
	copy(b[:4], probeMagic)
	b[4], b[5], b[6], b[7] = typ, role, 0, 0
	copy(b[8:24], h.UUID[:])
	copy(b[24:32], nonce[:])
}

// handleProbe answers probes for an active punch and records acks. Probes
// for unknown attempts are ignored, so the socket never reflects traffic for
// strangers. The ack is built in ack (owned by the calling reader) and sent
// back through w, the way the probe came. Zero allocations on the direct
// path.
func (s *Socket) handleProbe(b []byte, from netip.AddrPort, ack *[probeSize]byte, w datagramWriter) {
	var h engine.Handle
	copy(h.UUID[:], b[8:24])
	var nonce [8]byte
	copy(nonce[:], b[24:32])
	typ, role := b[4], b[5]
	s.mu.Lock()
	ps := s.punches[h]
	s.mu.Unlock()
	if ps == nil || role == ps.role { // a stranger, or our own probe looped back
		return
	}
	switch typ {
	case probeType:
		putProbe(ack, ackType, ps.role, h, nonce)
		// A lost ack is recovered by the prober's next probe.
		_, _ = w.WriteToUDPAddrPort(ack[:], from)
		select {
		case ps.probed <- from:
		default:
		}
	case ackType:
		if nonce != ps.nonce {
			return
		}
		select {
		case ps.acked <- from:
		default:
		}
	}
}
