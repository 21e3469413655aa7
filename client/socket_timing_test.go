package client

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Sink keeps benchmark results alive so the compiler cannot drop the work.
var Sink int

func BenchmarkDispatchAppDatagram(b *testing.B) {
	s, _ := dispatchSocket(b)
	from := netip.MustParseAddrPort("127.0.0.1:7")
	pkt := make([]byte, 200)
	out := make([]byte, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		s.dispatch(pkt, from)
		sl := <-s.ready
		Sink += copy(out, sl.b[:sl.n])
		s.free <- sl
	}
}

func BenchmarkDispatchProbe(b *testing.B) {
	s, _ := dispatchSocket(b)
	ps, probe := probedSession(b, s)
	to := netip.MustParseAddrPort("127.0.0.1:7") // the ack goes to the discard port
	b.ReportAllocs()
	for b.Loop() {
		s.dispatch(probe[:], to)
		select {
		case <-ps.probed:
		default:
		}
	}
	Sink += len(s.punches)
}

func BenchmarkDispatchMediatorAnswer(b *testing.B) {
	s, med := dispatchSocket(b)
	key := engine.Capability{7}
	w, resp := awaitedAnswer(s, &key, med)
	b.ReportAllocs()
	for b.Loop() {
		s.dispatch(resp, med)
		a := <-w.ch
		Sink += int(a.lifetime)
	}
}

func BenchmarkEncodePresence(b *testing.B) {
	p := &presenceState{handle: engine.Handle{UUID: engine.NewUUID()}, key: engine.Capability{1},
		local: netip.MustParseAddrPort("192.168.1.2:4000")}
	txID := newTxID()
	b.ReportAllocs()
	for b.Loop() {
		p.seq++
		Sink += len(appendPresence(p.buf[:0], txID, p.handle, &p.key, p.seq, p.local))
	}
}
