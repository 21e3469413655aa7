package client

import (
	"net/netip"
)

// datagramWriter sends one datagram: the Socket's own UDP socket for direct
// paths, a relayAllocation for relayed ones.
type datagramWriter interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// maxRelays bounds the relayed paths (TURN allocations) one Socket keeps.
const maxRelays = 16

// addRelay routes datagrams to peer (its relayed address) through a and
// starts handing what arrives on a to the Socket: probes to the punch,
// everything else to ReadFrom, from the peer's relayed address. The
// allocation lives until the Socket closes.
func (s *Socket) addRelay(peer netip.AddrPort, a *relayAllocation) error {
	s.mu.Lock()
	if len(s.relays) >= maxRelays {
		s.mu.Unlock()
		return &ConfigError{Field: "relay", Reason: "too many relayed paths on one socket"}
	}
	if old := s.relays[peer]; old != nil && old != a {
		old.close()
	}
	s.relays[peer] = a
	s.nrelays.Store(int32(len(s.relays)))
	s.mu.Unlock()
	go s.readRelay(a)
	select {
	case <-s.done: // closed meanwhile: closeRelays may have run before the add
		s.closeRelays()
	default:
	}
	return nil
}

// relayTo returns the allocation that reaches addr, or nil for a direct
// address. The common case (no relayed path) takes no lock.
func (s *Socket) relayTo(addr netip.AddrPort) *relayAllocation {
	if s.nrelays.Load() == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.relays[addr]
}

func (s *Socket) closeRelays() {
	s.mu.Lock()
	rs := s.relays
	s.relays = make(map[netip.AddrPort]*relayAllocation)
	s.nrelays.Store(0)
	s.mu.Unlock()
	for _, a := range rs {
		a.close()
	}
}

// readRelay is the reader of one allocation; it ends when the allocation
// is closed.
func (s *Socket) readRelay(a *relayAllocation) {
	var buf [rxBufSize]byte
	var ack [probeSize]byte
	for {
		n, from, err := a.relay.ReadFrom(buf[:])
		if err != nil {
			return
		}
		peer := addrPortOf(from)
		if isProbe(buf[:n]) {
			s.handleProbe(buf[:n], peer, &ack, a)
			continue
		}
		s.deliverApp(buf[:n], peer)
	}
}

// removeRelay drops the route to peer if it is still a's, and closes a.
func (s *Socket) removeRelay(peer netip.AddrPort, a *relayAllocation) {
	s.mu.Lock()
	if s.relays[peer] == a {
		delete(s.relays, peer)
		s.nrelays.Store(int32(len(s.relays)))
	}
	s.mu.Unlock()
	a.close()
}
