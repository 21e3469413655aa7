package main

import (
	"crypto/rand"
	"net"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// newPeerAt is newPeer bound to ip (any loopback address: 127.0.0.0/8 is
// all local on Linux).
func newPeerAt(t *testing.T, mediator, ip string) *udpPeer {
	t.Helper()
	server, err := netip.ParseAddrPort(mediator)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(ip), 0)))
	if err != nil {
		t.Fatalf("cannot open a UDP socket on %s: %v", ip, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &udpPeer{t: t, conn: conn, server: server}
}

// forgedDatagram is a request that cannot pass integrity: variant picks a
// wrong key for a real presence handle, a random handle of each kind, or a
// USERNAME without integrity.
func forgedDatagram(t *testing.T, variant int, real engine.Handle, seq uint64) []byte {
	t.Helper()
	var tx [12]byte
	var key engine.Capability
	h := engine.Handle{UUID: engine.NewUUID()}
	if _, err := rand.Read(tx[:]); err != nil {
		t.Fatal(err)
	}
	if _, err := rand.Read(key[:]); err != nil {
		t.Fatal(err)
	}
	kind := [...]byte{stun.KindPresence, stun.KindPresence, stun.KindAttemptHost, stun.KindAttemptClient, stun.KindPresence}[variant%5]
	if variant%5 == 0 {
		h = real
	}
	b := stun.NewBuilder(make([]byte, 0, 256), stun.BindingRequest, tx)
	name := stun.Username(kind, h)
	b.AddUsername(name[:])
	b.AddUint64(stun.AttrSequence, seq)
	if variant%5 != 4 {
		b.AddIntegritySHA256(key[:])
	}
	b.AddFingerprint()
	return append([]byte(nil), b.Bytes()...)
}

// TestE2EForgedUDPFlood: a flood of forged datagrams from many ports of one
// address — what an attacker spoofing a victim's address sends — gets at
// most the error burst of unsigned 401s back at that address, each no
// larger than its request plus 32 bytes, writes nothing to the store, and
// does not disturb a legitimate host refreshing meanwhile. Another address
// has its own budget.
func TestE2EForgedUDPFlood(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		const burst, sockets, perSocket = 5, 8, 40
		// A refill of one token per 1000 s: within the test the budget is the
		// burst, exactly.
		p := startProc(t, append(storeArgs, "--udp-error-rate", "0.001", "--udp-error-burst", "5")...)
		h := publishHost(t, p, "flood-1", "Flood host")
		before := p.pools()

		victims := make([]*udpPeer, sockets)
		sizes := map[[12]byte]int{}
		for i := range victims {
			victims[i] = newPeerAt(t, p.mediator, "127.0.0.2")
		}
		for n := range perSocket {
			for i, v := range victims {
				d := forgedDatagram(t, n+i, h.presence, uint64(1000+n))
				var tx [12]byte
				copy(tx[:], d[8:20])
				sizes[tx] = len(d)
				v.send(d)
			}
			if n%2 == 0 {
				h.refresh() // the legitimate host is served throughout
			}
		}
		answered := 0
		for _, v := range victims {
			tx := v.plainBinding()
			for {
				m := v.read()
				if m.TransactionID() == tx {
					break
				}
				code, _, _ := m.ErrorCode()
				size, ok := sizes[m.TransactionID()]
				if !ok || m.Type() != stun.BindingError || code != 401 || m.HasIntegrity() {
					t.Fatalf("answer type %#x code %d (signed %v) to a forged request", m.Type(), code, m.HasIntegrity())
				}
				if len(m.Raw()) > size+stun.MaxUnsignedGrowth {
					t.Fatalf("%d-byte answer to a %d-byte forged request", len(m.Raw()), size)
				}
				answered++
			}
		}
		if answered == 0 || answered > burst {
			t.Fatalf("%d answers to %d forged requests from one address, want 1..%d (the burst)", answered, sockets*perSocket, burst)
		}
		t.Logf("%d forged requests from %d ports of one address: %d unsigned 401 answers", sockets*perSocket, sockets, answered)
		other := newPeerAt(t, p.mediator, "127.0.0.3")
		other.send(forgedDatagram(t, 0, h.presence, 1))
		if m := other.read(); m.Type() != stun.BindingError {
			t.Fatalf("another address got type %#x, want its own 401", m.Type())
		}
		if after := p.pools(); after != before {
			t.Fatalf("the flood changed the pools: %s, before %s", after, before)
		}
		h.refresh()
	})
}
