package engine

import "net/netip"

// endpoint is a netip.AddrPort packed without pointers, so slabs of records
// holding endpoints are never scanned by the GC. An IPv6 zone is dropped
// (observed UDP sources of a rendezvous service carry none that matter);
// packing is deterministic, so comparing packed endpoints compares the
// observed ones.
type endpoint struct {
	ip   [16]byte
	port uint16
	fam  uint8 // 0 none, 4 IPv4, 6 IPv6
}

func packEndpoint(ap netip.AddrPort) endpoint {
	a := ap.Addr()
	switch {
	case !ap.IsValid():
		return endpoint{}
	case a.Is4():
		e := endpoint{port: ap.Port(), fam: 4}
		v4 := a.As4()
		copy(e.ip[:], v4[:])
		return e
	default:
		return endpoint{ip: a.As16(), port: ap.Port(), fam: 6}
	}
}

func (e endpoint) addrPort() netip.AddrPort {
	switch e.fam {
	case 4:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(e.ip[:4])), e.port)
	case 6:
		return netip.AddrPortFrom(netip.AddrFrom16(e.ip), e.port)
	}
	return netip.AddrPort{}
}

func (e endpoint) valid() bool { return e.fam != 0 }

// binding is a packed Binding: an observed public endpoint and an optional
// LAN endpoint.
type binding struct{ pub, loc endpoint }

func packBinding(pub, loc netip.AddrPort) binding {
	return binding{pub: packEndpoint(pub), loc: packEndpoint(loc)}
}

func (b binding) bound() bool { return b.pub.valid() }

func (b binding) view() Binding {
	return Binding{Public: b.pub.addrPort(), Local: b.loc.addrPort()}
}
