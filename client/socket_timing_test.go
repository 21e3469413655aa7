package client

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Sink keeps benchmark results alive so the compiler cannot drop the work.
var Sink int

func benchSocket(b *testing.B) (*Socket, netip.AddrPort) {
	c := newLossy(b)
	med := netip.MustParseAddrPort("127.0.0.1:9")
	s := NewSocket(c, med)
	b.Cleanup(func() { s.Close() })
	return s, med
}

func BenchmarkDispatchAppDatagram(b *testing.B) {
	s, _ := benchSocket(b)
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
	s, _ := benchSocket(b)
	h := engine.Handle{UUID: engine.NewUUID()}
	ps := &punchSession{role: 'h', acked: make(chan netip.AddrPort, 1), probed: make(chan netip.AddrPort, 4)}
	if err := s.addPunch(h, ps); err != nil {
		b.Fatal(err)
	}
	var probe [probeSize]byte
	putProbe(&probe, probeType, 'c', h, [8]byte{1})
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
	s, med := benchSocket(b)
	key := engine.Capability{7}
	txID := newTxID()
	w := s.acquireWaiter(txID, &key)
	var ab [stun.MaxDatagram]byte
	bl := stun.NewBuilder(ab[:0], stun.BindingSuccess, txID)
	bl.AddXORAddress(stun.AttrXORMappedAddress, med)
	bl.AddUint32(stun.AttrLifetime, 20)
	bl.AddIntegritySHA256(key[:])
	bl.AddFingerprint()
	resp := bl.Bytes()
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
