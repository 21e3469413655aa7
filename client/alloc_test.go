package client

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// The per-datagram paths of a Socket must not allocate: dispatching an
// application datagram, answering a probe, matching a mediator answer to its
// waiter, and encoding a presence refresh.
func TestSocketDispatchAllocs(t *testing.T) {
	s, med := dispatchSocket(t)
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

	ps, probe := probedSession(t, s)
	f("probe answered", func() {
		s.dispatch(probe[:], peer)
		select {
		case <-ps.probed:
		default:
		}
	})

	key := engine.Capability{7}
	w, resp := awaitedAnswer(s, &key, peer)
	f("mediator answer matched", func() {
		s.dispatch(resp, med)
		a := <-w.ch
		if a.mapped != peer {
			panic("BUG: wrong mapped address")
		}
	})
	s.releaseWaiter(w)

	txID := newTxID()
	p := &presenceState{handle: engine.Handle{UUID: engine.NewUUID()}, key: key, local: peer}
	f("presence encoded", func() {
		p.seq++
		if appendPresence(p.buf[:0], txID, p.handle, &p.key, p.seq, p.local) == nil {
			panic("BUG: presence does not fit")
		}
	})
}
