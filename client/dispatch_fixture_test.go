package client

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// The Socket fixtures that the per-datagram allocation guard
// (alloc_test.go) and the dispatch benchmarks (socket_timing_test.go)
// share, so both measure the same datagrams.

// dispatchSocket is a Socket on a lossy loopback conn whose mediator is the
// discard port, closed at cleanup.
func dispatchSocket(tb testing.TB) (*Socket, netip.AddrPort) {
	tb.Helper()
	med := netip.MustParseAddrPort("127.0.0.1:9")
	s := NewSocket(newLossy(tb), med)
	tb.Cleanup(func() { s.Close() })
	return s, med
}

// probedSession registers a host punch session on s and returns it with a
// client probe of that session.
func probedSession(tb testing.TB, s *Socket) (*punchSession, [probeSize]byte) {
	tb.Helper()
	h := engine.Handle{UUID: engine.NewUUID()}
	ps := &punchSession{role: 'h', acked: make(chan netip.AddrPort, 1), probed: make(chan netip.AddrPort, 4)}
	if err := s.addPunch(h, ps); err != nil {
		tb.Fatal(err)
	}
	var probe [probeSize]byte
	putProbe(&probe, probeType, 'c', h, [8]byte{1})
	return ps, probe
}

// awaitedAnswer registers a waiter on s for a new transaction and returns it
// with the mediator's answer to it, signed with key, mapping to mapped.
func awaitedAnswer(s *Socket, key *engine.Capability, mapped netip.AddrPort) (*waiter, []byte) {
	txID := newTxID()
	w := s.acquireWaiter(txID, key)
	b := stun.NewBuilder(make([]byte, 0, stun.MaxDatagram), stun.BindingSuccess, txID)
	b.AddXORAddress(stun.AttrXORMappedAddress, mapped)
	b.AddUint32(stun.AttrLifetime, 20)
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return w, b.Bytes()
}
