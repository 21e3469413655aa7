package client

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// The per-datagram paths of a Socket must not allocate: dispatching an
// application datagram, answering a probe, matching a mediator answer to its
// waiter, and encoding a presence refresh.
func TestSocketDispatchAllocs(t *testing.T) {
	c := newLossy(t)
	med := netip.MustParseAddrPort("127.0.0.1:9")
	s := NewSocket(c, med)
	defer s.Close()
	peer := netip.MustParseAddrPort("127.0.0.1:7") // discard port: acks go nowhere useful

	f := func(name string, run func()) {
		t.Helper()
		if n := testing.AllocsPerRun(200, run); n != 0 {
			t.Fatalf("%s: %v allocations per datagram, want 0", name, n)
		}
	}

	app := []byte("application datagram")
	buf := make([]byte, 64)
	f("application datagram", func() {
		s.dispatch(app, peer)
		sl := <-s.ready // what ReadFrom does, without its context
		copy(buf, sl.b[:sl.n])
		s.free <- sl
	})

	h := engine.Handle{UUID: engine.NewUUID()}
	ps := &punchSession{role: 'h', acked: make(chan netip.AddrPort, 1), probed: make(chan netip.AddrPort, 4)}
	if err := s.addPunch(h, ps); err != nil {
		t.Fatal(err)
	}
	var probe [probeSize]byte
	putProbe(&probe, probeType, 'c', h, [8]byte{1})
	f("probe answered", func() {
		s.dispatch(probe[:], peer)
		select {
		case <-ps.probed:
		default:
		}
	})

	key := engine.Capability{7}
	txID := newTxID()
	w := s.acquireWaiter(txID, &key)
	var ab [stun.MaxDatagram]byte
	b := stun.NewBuilder(ab[:0], stun.BindingSuccess, txID)
	b.AddXORAddress(stun.AttrXORMappedAddress, peer)
	b.AddUint32(stun.AttrLifetime, 20)
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	resp := b.Bytes()
	f("mediator answer matched", func() {
		s.dispatch(resp, med)
		a := <-w.ch
		if a.mapped != peer {
			panic("BUG: wrong mapped address")
		}
	})
	s.releaseWaiter(w)

	p := &presenceState{handle: h, key: key, local: peer}
	f("presence encoded", func() {
		p.seq++
		if appendPresence(p.buf[:0], txID, p.handle, &p.key, p.seq, p.local) == nil {
			panic("BUG: presence does not fit")
		}
	})
}
