package netio

import (
	"net"
	"net/netip"
)

// relayPeers decides which RDV-RELAYED-ADDRESS a bind may record. A relayed
// address is handed to the other side, which then sends to it through its
// own TURN server: an address inside a network (loopback, private, link-local,
// CGNAT, ULA), a multicast or unspecified one, or the mediator's own, would
// make that relay (or the other side's host) send into a network it should
// not reach. Only an operator's allow-list (--relay-allow-peers, for labs
// and tests) lets such an address through; the mediator's exact listening
// endpoints are refused even then.
type relayPeers struct {
	allow  []netip.Prefix
	ownIPs []netip.Addr     // the mediator's addresses (its interfaces' when it listens on an unspecified one)
	listen []netip.AddrPort // its bound endpoints
}

// Internal ranges the checks of netip.Addr do not cover.
var (
	cgnat = netip.MustParsePrefix("100.64.0.0/10")
	// "this network" (0/8) and the IPv4 broadcast are no peer either.
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
	broadcast = netip.AddrFrom4([4]byte{255, 255, 255, 255})
)

// permits reports whether a is a relayed address the mediator may
// introduce. It does not allocate (a bind datagram's path).
func (r *relayPeers) permits(ap netip.AddrPort) bool {
	a := ap.Addr().Unmap()
	ap = netip.AddrPortFrom(a, ap.Port())
	for _, l := range r.listen {
		if l == ap {
			return false
		}
	}
	for _, p := range r.allow {
		if p.Contains(a) {
			return true
		}
	}
	if internalAddr(a) {
		return false
	}
	for _, o := range r.ownIPs {
		if o == a {
			return false
		}
	}
	return true
}

// internalAddr reports whether a is not a public unicast address.
func internalAddr(a netip.Addr) bool {
	return !a.IsValid() || a.IsUnspecified() || a.IsLoopback() || a.IsPrivate() ||
		a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || cgnat.Contains(a) || thisNet.Contains(a) || a == broadcast
}

// newRelayPeers builds the policy for a mediator bound to listen.
func newRelayPeers(allow []netip.Prefix, listen []netip.AddrPort) *relayPeers {
	r := &relayPeers{allow: allow}
	unspecified := false
	for _, l := range listen {
		a := l.Addr().Unmap()
		r.listen = append(r.listen, netip.AddrPortFrom(a, l.Port()))
		if a.IsUnspecified() {
			unspecified = true
		} else {
			r.ownIPs = append(r.ownIPs, a)
		}
	}
	if unspecified {
		// Bound to every address: each interface address is ours.
		if ifs, err := net.InterfaceAddrs(); err == nil {
			for _, ia := range ifs {
				if n, ok := ia.(*net.IPNet); ok {
					if a, ok := netip.AddrFromSlice(n.IP); ok {
						r.ownIPs = append(r.ownIPs, a.Unmap())
					}
				}
			}
		}
	}
	return r
}
