package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestRelayedAddressRefused: an RDV-RELAYED-ADDRESS inside a network
// (loopback, RFC 1918, ULA, link-local, CGNAT), multicast, unspecified or
// the mediator's own endpoint gets a signed 449 and is never recorded, so
// no RELAY-INTRODUCE hands it to the other side; a public address is
// introduced; the operator's allow-list lets a named range through.
func TestRelayedAddressRefused(t *testing.T) {
	f := newFixture(t, Config{})
	refused := []string{
		"127.0.0.1:5000", "[::1]:5000", "10.1.2.3:5000", "172.16.0.9:5000", "192.168.1.1:5000",
		"[fd00::1]:5000", "169.254.169.254:80", "[fe80::1]:5000", "100.64.0.1:5000",
		"224.0.0.1:5000", "[ff02::1]:5000", "0.0.0.0:5000", "[::]:5000", "255.255.255.255:5000",
		"[::ffff:10.0.0.1]:5000", f.addr.String(),
	}
	s := f.relayScene(true)
	for _, r := range refused {
		ap := netip.MustParseAddrPort(r)
		m := s.host.roundTrip(signedReq('h', s.a.Handle, s.hk[:], relayedAddr(ap)))
		wantError(t, m, stun.CodePeerRefused, s.hk[:])
		m = s.client.roundTrip(signedReq('c', s.a.Handle, s.ck[:], relayedAddr(ap)))
		wantError(t, m, stun.CodePeerRefused, s.ck[:])
	}
	// Nothing was recorded: a public relayed address on each side now
	// introduces them to each other, and only with those.
	hostRelay := netip.MustParseAddrPort("198.51.100.7:40000")
	clientRelay := netip.MustParseAddrPort("[2001:db8::9]:40001")
	wantSuccess(t, s.host.roundTrip(signedReq('h', s.a.Handle, s.hk[:], relayedAddr(hostRelay))), s.hk[:], s.host.addr())
	s.host.barrier()
	wantSuccess(t, s.client.roundTrip(signedReq('c', s.a.Handle, s.ck[:], relayedAddr(clientRelay))), s.ck[:], s.client.addr())
	m, _ := s.client.recv()
	wantRelayIntroduce(t, m, 'c', s.a.Handle, s.ck[:], hostRelay)
	m, _ = s.host.recv()
	wantRelayIntroduce(t, m, 'h', s.a.Handle, s.hk[:], clientRelay)
}

// TestRelayAllowPeers: a range the operator allows is introduced, the
// mediator's own listening endpoint still is not.
func TestRelayAllowPeers(t *testing.T) {
	f := newFixture(t, Config{RelayAllowPeers: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")}})
	s := f.relayScene(true)
	m := s.host.roundTrip(signedReq('h', s.a.Handle, s.hk[:], relayedAddr(f.addr)))
	wantError(t, m, stun.CodePeerRefused, s.hk[:])
	hostRelay := netip.MustParseAddrPort("127.0.0.1:40000")
	clientRelay := netip.MustParseAddrPort("10.9.8.7:40001")
	wantSuccess(t, s.host.roundTrip(signedReq('h', s.a.Handle, s.hk[:], relayedAddr(hostRelay))), s.hk[:], s.host.addr())
	wantSuccess(t, s.client.roundTrip(signedReq('c', s.a.Handle, s.ck[:], relayedAddr(clientRelay))), s.ck[:], s.client.addr())
	m, _ = s.client.recv()
	wantRelayIntroduce(t, m, 'c', s.a.Handle, s.ck[:], hostRelay)
	// Still refused outside the allowed ranges.
	m = s.client.roundTrip(signedReq('c', s.a.Handle, s.ck[:], relayedAddr(netip.MustParseAddrPort("192.168.0.1:1"))))
	wantError(t, m, stun.CodePeerRefused, s.ck[:])
}

// TestRelayPeersNoAllocs: the check on a bind's relayed address allocates
// nothing.
func TestRelayPeersNoAllocs(t *testing.T) {
	r := newRelayPeers([]netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:3478")})
	as := []netip.AddrPort{
		netip.MustParseAddrPort("198.51.100.7:1"), netip.MustParseAddrPort("10.0.0.1:1"),
		netip.MustParseAddrPort("[fe80::1]:1"), netip.MustParseAddrPort("[::ffff:192.168.0.1]:1"),
	}
	want := []bool{true, true, false, false}
	if n := testing.AllocsPerRun(100, func() {
		for i, a := range as {
			if r.permits(a) != want[i] {
				t.Fatalf("permits(%v) != %v", a, want[i])
			}
		}
	}); n != 0 {
		t.Fatalf("permits allocates %.1f times", n)
	}
}
