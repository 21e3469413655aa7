package memstore

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
)

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
	var e endpoint
	e.set(ap)
	return e
}

// set packs ap into e in place. A heartbeat packs straight into its
// record: building the endpoint in a temporary and copying it stalled on
// store forwarding (the copy's wide loads over the narrow stores just made)
// and was a quarter of a refresh's cost.
func (e *endpoint) set(ap netip.AddrPort) {
	a := ap.Addr()
	switch {
	case !ap.IsValid():
		*e = endpoint{}
	case a.Is4():
		e.ip = [16]byte{}
		*(*[4]byte)(e.ip[:4]) = a.As4()
		e.port, e.fam = ap.Port(), 4
	default:
		e.ip = a.As16()
		e.port, e.fam = ap.Port(), 6
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
	var b binding
	b.set(pub, loc)
	return b
}

// set packs pub and loc into b in place (see endpoint.set).
func (b *binding) set(pub, loc netip.AddrPort) {
	b.pub.set(pub)
	b.loc.set(loc)
}

func (b binding) bound() bool { return b.pub.valid() }

func (b binding) view() engine.Binding {
	return engine.Binding{Public: b.pub.addrPort(), Local: b.loc.addrPort()}
}
