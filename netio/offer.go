package netio

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Offer asks the mediator to send an OFFER for a new attempt to the host's
// presence endpoint (CONTRACT.md §4.4): USERNAME p:<v.HostPresence>,
// RDV-ATTEMPT v.Handle, RDV-LIFETIME, signed with the presence capability.
// It never blocks: the view is queued (bounded) for the offer goroutine and
// dropped and counted when the queue is full or the mediator is closed; a
// lost OFFER is recovered by the host's next presence refresh. Safe for
// concurrent use; callable before Start (offers wait for it).
func (m *Mediator) Offer(v engine.AttemptView) {
	select {
	case m.offers <- v:
	default:
		m.met.drops[dropOfferQueue].Inc()
	}
}

// offerLoop sends queued offers until Close.
func (m *Mediator) offerLoop() {
	defer m.wg.Done()
	buf := make([]byte, 0, writeSlot)
	for {
		select {
		case <-m.done:
			return
		case v := <-m.offers:
			m.sendOffer(buf, &v)
		}
	}
}

// encodeOffer builds an OFFER into buf.
func encodeOffer(buf []byte, keys *engine.Keyring, v *engine.AttemptView) []byte {
	tx := indicationTxID(stun.KindPresence, v.Handle)
	u := stun.Username(stun.KindPresence, v.HostPresence)
	key := keys.Presence(v.HostPresence)
	b := stun.NewBuilder(buf, stun.OfferIndication, tx)
	b.AddUsername(u[:])
	b.AddAttempt(v.Handle)
	b.AddUint32(stun.AttrLifetime, lifetimeSeconds(v.TTL))
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

func (m *Mediator) sendOffer(buf []byte, v *engine.AttemptView) {
	dst := v.HostPresencePublic
	c := m.connFor(dst)
	if c == nil || !dst.IsValid() {
		m.met.drops[dropOfferRoute].Inc()
		return
	}
	msg := encodeOffer(buf, m.keys, v)
	if err := c.WriteTo(msg, dst); err != nil {
		m.met.drops[dropSendFailed].Inc()
		return
	}
	m.met.out.Inc()
	m.met.answers[methodOffer][resOK].Inc()
	queueMark(m.marks, v.Handle)
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
