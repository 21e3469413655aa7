package netio

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestRawPathZeroAllocs: one datagram through the raw recvmmsg/sendmmsg path
// (read, answer, send) allocates nothing, with and without PKTINFO.
func TestRawPathZeroAllocs(t *testing.T) {
	for _, listenOn := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		srv, cl := rawServerAndClient(t, listenOn)
		cl.SetReadDeadline(time.Now().Add(waitBound))
		in := newPackets(batchSize, readSlot)
		msg := plainBinding(t)
		buf := make([]byte, 64)
		dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.LocalAddr().Port())
		from := netip.MustParseAddrPort(cl.LocalAddr().String())
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := cl.WriteToUDPAddrPort(msg, dst); err != nil {
				t.Fatal(err)
			}
			n, err := srv.ReadBatch(in)
			if err != nil || n != 1 || in[0].addr != from {
				t.Fatalf("ReadBatch: %d %v %v", n, err, in[0].addr)
			}
			if listenOn == "0.0.0.0:0" && in[0].local != dst.Addr() {
				t.Fatalf("PKTINFO destination %v, want %v", in[0].local, dst.Addr())
			}
			if sent, failed, err := srv.WriteBatch(in[:1]); sent != 1 || failed != 0 || err != nil {
				t.Fatalf("WriteBatch: %d %d %v", sent, failed, err)
			}
			if _, _, err := cl.ReadFromUDPAddrPort(buf); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Fatalf("raw path on %s: %v allocations per datagram", listenOn, allocs)
		}
	}
}

// TestRawTryReadZeroAllocs: the non-blocking read of the overlap loop's
// top-up allocates nothing, whether datagrams are queued or none is.
func TestRawTryReadZeroAllocs(t *testing.T) {
	srv, cl := rawServerAndClient(t, "127.0.0.1:0")
	in := newPackets(batchSize, readSlot)
	msg := plainBinding(t)
	dst := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), srv.LocalAddr().Port())
	from := netip.MustParseAddrPort(cl.LocalAddr().String())
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := srv.TryReadBatch(in); n != 0 || err != nil {
			t.Fatalf("TryReadBatch on an empty socket: %d %v", n, err)
		}
		for range 2 {
			if _, err := cl.WriteToUDPAddrPort(msg, dst); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := srv.ReadBatch(in[:1]); n != 1 || err != nil {
			t.Fatalf("ReadBatch: %d %v", n, err)
		}
		// The second datagram is queued behind the first (at once on
		// loopback unless the kernel defers delivery: then retry).
		n, err := 0, error(nil)
		for deadline := time.Now().Add(waitBound); n == 0 && err == nil && time.Now().Before(deadline); {
			if n, err = srv.TryReadBatch(in); n == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
		if n != 1 || err != nil || in[0].addr != from {
			t.Fatalf("TryReadBatch with a datagram queued: %d %v %v", n, err, in[0].addr)
		}
	})
	if allocs != 0 {
		t.Fatalf("TryReadBatch: %v allocations per call", allocs)
	}
}

// rawServerAndClient is a socket listening on listenOn through the raw
// path and a loopback client socket, both closed when the test ends.
func rawServerAndClient(t *testing.T, listenOn string) (batchConn, *net.UDPConn) {
	t.Helper()
	cfg, addrs, err := Config{Addrs: []string{listenOn}, Sockets: 1}.normalize()
	if err != nil {
		t.Fatal(err)
	}
	g, err := listen(addrs[0], 1, &cfg, map[uint64]bool{}, newSteerKeys())
	if err != nil {
		t.Fatal(err)
	}
	conns := g.conns
	t.Cleanup(func() { conns[0].Close() })
	cl, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return conns[0], cl
}
