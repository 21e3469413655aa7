package netio

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// introduce sends INTRODUCE indications (docs/contracts/udp.md#introduce,
// docs/contracts/semantics.md#attempt-binding). The first time the introduction
// is consumed, both sides get one, each at its bind source, naming the other's
// bind source and local address, signed with the recipient's capability. A
// later identical bind (the store read the consumed introduction back) re-sends
// the requester's INTRODUCE only; nothing is consumed twice. Both leave from
// the address the completing request reached, except the other side's when its
// bind reached another instance of the deployment: its NAT mapping points at
// that instance, so the INTRODUCE is forwarded there. Transaction IDs derive
// from the handle, so the re-sent INTRODUCE is the same datagram.
func (p *processor) introduce(r *request, op *engine.Op) {
	in := &op.Intro
	h := op.Bind.Handle
	toHost := r.kind == stun.KindAttemptHost || op.FirstIntro
	toClient := r.kind == stun.KindAttemptClient || op.FirstIntro
	if toHost && !p.forwarded(r, op, stun.KindAttemptHost, op.Attempt.HostInstance, in.Host, in.Client) {
		p.introduceOne(r, stun.KindAttemptHost, h, p.sidePads(r, op, stun.KindAttemptHost), in.Host, in.Client)
	}
	if toClient && !p.forwarded(r, op, stun.KindAttemptClient, op.Attempt.PeerInstance, in.Client, in.Host) {
		p.introduceOne(r, stun.KindAttemptClient, h, p.sidePads(r, op, stun.KindAttemptClient), in.Client, in.Host)
	}
	p.peerPads = engine.HMACKey{}
}

// forwarded hands the INTRODUCE to the side of kind (to, introduced to peer)
// to instance at, the one that side's bind reached, when that is another
// instance and the side did not send r. True when it is that instance's to
// send: queued, or dropped and counted (the side's bind retransmission
// recovers it). No capability is queued: the sender derives it again.
func (p *processor) forwarded(r *request, op *engine.Op, kind byte, at engine.UUID, to, peer engine.Binding) bool {
	if r.kind == kind || !p.fwd.remote(at) || !to.Bound() || !peer.Bound() {
		return false
	}
	ps := push{kind: kind, handle: op.Bind.Handle, presence: op.Attempt.HostPresence, dst: to.Public, peer: peer}
	if !p.fwd.enqueue(at, &ps) {
		p.stats.drops[dropForwardQueue]++
	}
	return true
}

// sidePads returns the pad states of the capability of side kind of the
// attempt op bound, to sign that side's INTRODUCE or RELAY-INTRODUCE: the
// request's own, or the other side's derived from the keyring into
// p.peerPads (the caller clears them once the indications are signed).
func (p *processor) sidePads(r *request, op *engine.Op, kind byte) *engine.HMACKey {
	if r.kind == kind {
		return &r.pads
	}
	var key engine.Capability
	if kind == stun.KindAttemptHost {
		pc := p.keys.PresenceWith(p.mac, op.Attempt.HostPresence)
		key = engine.HostAttemptCapabilityWith(p.mac, &pc, op.Bind.Handle)
	} else {
		key = p.keys.AttemptClientWith(p.mac, op.Bind.Handle)
	}
	p.mac.SetKey(&p.peerPads, key[:])
	return &p.peerPads
}

func (p *processor) introduceOne(r *request, kind byte, h engine.Handle, pads *engine.HMACKey, to, peer engine.Binding) {
	if !to.Bound() || !peer.Bound() {
		return
	}
	s := p.indicationSlot(r, to.Public)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.IntroduceIndication, indicationTxID(kind, h))
	addIntroduceBody(&b, kind, h, peer)
	p.sendIndication(s, &b, pads, methodIntroduce)
}

// sendIndication signs the indication built in slot s under pads, adds its
// fingerprint and queues it, counting it as an answer of m.
func (p *processor) sendIndication(s *packet, b *stun.Builder, pads *engine.HMACKey, m method) {
	b.AddIntegrityWith(p.mac, pads)
	b.AddFingerprint()
	if p.commit(s, b, stun.MaxSignedAnswer) {
		p.stats.answers[m][resOK]++
	}
}

// indicationSlot is the answer slot of an indication to peer address to,
// sent from the local address the completing request r reached, unless it
// is of the other address family (the kernel refuses that source): then
// the kernel chooses one.
func (p *processor) indicationSlot(r *request, to netip.AddrPort) *packet {
	local := r.local
	if local.IsValid() && local.Unmap().Is4() != to.Addr().Unmap().Is4() {
		local = netip.Addr{}
	}
	return p.slot(to, local)
}

// addIntroduceBody adds an INTRODUCE's attributes before its signature:
// the recipient's USERNAME and the peer's endpoints.
func addIntroduceBody(b *stun.Builder, kind byte, h engine.Handle, peer engine.Binding) {
	u := stun.Username(kind, h)
	b.AddUsername(u[:])
	b.AddXORAddress(stun.AttrXORPeerAddress, peer.Public)
	if peer.Local.IsValid() {
		b.AddXORAddress(stun.AttrPeerLocalAddress, peer.Local)
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
