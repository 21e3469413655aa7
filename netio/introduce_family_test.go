package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestIntroduceAcrossFamilies: with an IPv4 and an IPv6 listen address, a host
// on IPv4 and a client on IPv6 are each introduced
// (docs/contracts/udp.md#attempt-bind, docs/contracts/udp.md#introduce: when
// both roles are bound an INTRODUCE goes to each side), whichever side
// completes the pair. The INTRODUCE to the side on the other family cannot
// leave from the socket the completing bind reached; the mediator must neither
// crash (an IPv6 destination on an IPv4 raw socket) nor lose it.
func TestIntroduceAcrossFamilies(t *testing.T) {
	introduceAcrossFamilies(t, []string{"127.0.0.1:0", "[::1]:0"}, func(f *fixture) (v4, v6 netip.AddrPort) {
		return f.med.LocalAddrs()[0], f.med.LocalAddrs()[1]
	})
}

// TestIntroduceAcrossFamiliesDualStack is TestIntroduceAcrossFamilies on
// one dual-stack wildcard socket ([::], PKTINFO): the INTRODUCE to the side
// on the other family must not be sent with the completing request's
// destination (of the wrong family) as its source, which the kernel refuses.
func TestIntroduceAcrossFamiliesDualStack(t *testing.T) {
	introduceAcrossFamilies(t, []string{"[::]:0"}, func(f *fixture) (v4, v6 netip.AddrPort) {
		port := f.med.LocalAddrs()[0].Port()
		return netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), netip.AddrPortFrom(netip.IPv6Loopback(), port)
	})
}

// introduceAcrossFamilies runs a host over IPv4 and a client over IPv6
// against a mediator listening on addrs (mediator addresses from targets),
// on both I/O paths and in both bind orders, and checks both INTRODUCEs.
func introduceAcrossFamilies(t *testing.T, addrs []string, targets func(*fixture) (v4, v6 netip.AddrPort)) {
	t.Helper()
	if !ipv6Loopback() {
		t.Fatal("this test needs IPv6 on loopback ([::1])")
	}
	for _, portable := range []bool{false, true} {
		for _, hostFirst := range []bool{false, true} {
			f := newFixture(t, Config{Addrs: addrs, Portable: portable})
			v4, v6 := targets(f)
			v, pc := f.listing()
			host, client := newPeer(t, v4), newPeer(t, v6)
			wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], host.addr())
			a := f.attempt(v)
			hc, cc := hostCap(v.Presence, a.Handle), clientCap(a.Handle)
			hreq := signedReq('h', a.Handle, hc[:])
			creq := signedReq('c', a.Handle, cc[:])
			first, second := client, host
			freq, sreq := creq, hreq
			if hostFirst {
				first, second, freq, sreq = host, client, hreq, creq
			}
			first.roundTrip(freq)
			m := second.roundTrip(sreq)
			if m.Type() != stun.BindingSuccess {
				t.Fatalf("portable=%v hostFirst=%v: completing bind answered %#x", portable, hostFirst, m.Type())
			}
			m, _ = client.recv()
			wantIntroduce(t, m, 'c', a.Handle, cc[:], host.addr(), netip.AddrPort{})
			m, _ = host.recv()
			wantIntroduce(t, m, 'h', a.Handle, hc[:], client.addr(), netip.AddrPort{})
			// The mediator still serves both families.
			host.barrier()
			client.barrier()
		}
	}
}
