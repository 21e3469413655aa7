package netio

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// introduce sends INTRODUCE indications (CONTRACT.md §4.5, §7.3, §7.4). The
// first time the introduction is consumed, both sides get one, each at its
// bind source, naming the other's bind source and local address, signed with
// the recipient's capability. A later identical bind (the store read the
// consumed introduction back) re-sends the requester's INTRODUCE only;
// nothing is consumed twice. Both leave from the address the completing
// request reached. Transaction IDs derive from the handle, so the re-sent
// INTRODUCE is the same datagram.
func (p *processor) introduce(r *request, op *engine.Op) {
	in := &op.Intro
	h := op.Bind.Handle
	toHost := r.kind == stun.KindAttemptHost || op.FirstIntro
	toClient := r.kind == stun.KindAttemptClient || op.FirstIntro
	if toHost {
		pads := &r.pads
		if r.kind != stun.KindAttemptHost {
			pc := p.keys.PresenceWith(p.mac, op.Attempt.HostPresence)
			key := engine.HostAttemptCapabilityWith(p.mac, &pc, h)
			pads = p.otherPads(&key)
		}
		p.introduceOne(r, stun.KindAttemptHost, h, pads, in.Host, in.Client)
	}
	if toClient {
		pads := &r.pads
		if r.kind != stun.KindAttemptClient {
			key := p.keys.AttemptClientWith(p.mac, h)
			pads = p.otherPads(&key)
		}
		p.introduceOne(r, stun.KindAttemptClient, h, pads, in.Client, in.Host)
	}
	p.peerPads = engine.HMACKey{}
}

// otherPads computes the pad states of the other side's capability into
// p.peerPads (cleared once its INTRODUCE is signed).
func (p *processor) otherPads(key *engine.Capability) *engine.HMACKey {
	p.mac.SetKey(&p.peerPads, key[:])
	return &p.peerPads
}

func (p *processor) introduceOne(r *request, kind byte, h engine.Handle, pads *engine.HMACKey, to, peer engine.Binding) {
	if !to.Bound() || !peer.Bound() {
		return
	}
	// The completing request's destination cannot be the source of an
	// INTRODUCE to a peer of the other address family (the kernel refuses
	// it): let the kernel choose one.
	local := r.local
	if local.IsValid() && local.Unmap().Is4() != to.Public.Addr().Unmap().Is4() {
		local = netip.Addr{}
	}
	s := p.slot(to.Public, local)
	if s == nil {
		return
	}
	tx := indicationTxID(kind, h)
	u := stun.Username(kind, h)
	b := stun.NewBuilder(s.buf, stun.IntroduceIndication, tx)
	b.AddUsername(u[:])
	b.AddXORAddress(stun.AttrXORPeerAddress, peer.Public)
	if peer.Local.IsValid() {
		b.AddXORAddress(stun.AttrPeerLocalAddress, peer.Local)
	}
	b.AddIntegrityWith(p.mac, pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[methodIntroduce][resOK]++
	}
}

// indicationTxID makes an indication's transaction ID from its handle and
// recipient kind, so a re-sent INTRODUCE (or OFFER) is byte-for-byte the
// same datagram and the peer can recognise a duplicate.
func indicationTxID(kind byte, h engine.Handle) (tx [12]byte) {
	copy(tx[:], h.UUID[4:16])
	tx[0] ^= kind
	return tx
}
