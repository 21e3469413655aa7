package netio

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Offer asks the mediator to send an OFFER for a new attempt to the host's
// presence endpoint (docs/contracts/udp.md#offer): USERNAME p:<v.HostPresence>,
// RDV-ATTEMPT v.Handle, RDV-LIFETIME, signed with the presence capability.
// It leaves from the instance the host's presence last reached
// (v.HostPresenceInstance), forwarded there when that is another instance.
// It never blocks: the offer is queued (bounded) and dropped and counted
// when the queue is full or the mediator is closed; a lost OFFER is
// recovered by the host's next presence refresh. Safe for concurrent use;
// callable before Start (offers wait for it).
func (m *Mediator) Offer(v engine.AttemptView) {
	p := push{kind: pushOffer, handle: v.Handle, presence: v.HostPresence, lifetime: lifetimeSeconds(v.TTL),
		dst: v.HostPresencePublic}
	if p.dst.IsValid() && m.fwd.remote(v.HostPresenceInstance) {
		if !m.fwd.enqueue(v.HostPresenceInstance, &p) {
			m.met.drops[dropForwardQueue].Inc()
		}
		return
	}
	select {
	case m.pushes <- p:
	default:
		m.met.drops[dropOfferQueue].Inc()
	}
}

// pushLoop sends queued pushes (this instance's offers and what other
// instances forwarded here) until Close.
func (m *Mediator) pushLoop() {
	defer m.wg.Done()
	buf := make([]byte, 0, writeSlot)
	for {
		select {
		case <-m.done:
			return
		case p := <-m.pushes:
			m.sendPush(buf, &p)
		}
	}
}

// encodeOffer builds an OFFER for attempt h to the host of presence handle
// pres into buf.
func encodeOffer(buf []byte, keys *engine.Keyring, pres, h engine.Handle, lifetime uint32) []byte {
	tx := indicationTxID(stun.KindPresence, h)
	u := stun.Username(stun.KindPresence, pres)
	key := keys.Presence(pres)
	b := stun.NewBuilder(buf, stun.OfferIndication, tx)
	b.AddUsername(u[:])
	b.AddAttempt(h)
	b.AddUint32(stun.AttrLifetime, lifetime)
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

// connFor picks a socket that can reach dst: the first of dst's family, or a
// dual-stack wildcard socket for IPv4.
func (m *Mediator) connFor(dst netip.AddrPort) batchConn {
	is4 := dst.Addr().Unmap().Is4()
	var dual batchConn
	for _, c := range m.conns {
		a := c.LocalAddr().Addr()
		if a.Is4() == is4 {
			return c
		}
		if dual == nil && reaches(c.LocalAddr(), dst) {
			dual = c
		}
	}
	return dual
}

// reaches reports whether a socket bound to local can send to dst: same
// address family, or an IPv4 destination from a dual-stack IPv6 wildcard.
func reaches(local, dst netip.AddrPort) bool {
	is4 := dst.Addr().Unmap().Is4()
	a := local.Addr()
	return a.Is4() == is4 || (is4 && a.Is6() && a.IsUnspecified())
}
