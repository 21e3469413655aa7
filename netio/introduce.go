package netio

import (
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
		key := r.key
		if r.kind != stun.KindAttemptHost {
			pc := p.keys.Presence(op.Attempt.HostPresence)
			key = engine.HostAttemptCapability(&pc, h)
		}
		p.introduceOne(r, stun.KindAttemptHost, h, &key, in.Host, in.Client)
	}
	if toClient {
		key := r.key
		if r.kind != stun.KindAttemptClient {
			key = p.keys.AttemptClient(h)
		}
		p.introduceOne(r, stun.KindAttemptClient, h, &key, in.Client, in.Host)
	}
}

func (p *processor) introduceOne(r *request, kind byte, h engine.Handle, key *engine.Capability, to, peer engine.Binding) {
	if !to.Bound() || !peer.Bound() {
		return
	}
	s := p.slot(to.Public, r.local)
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
	b.AddIntegritySHA256(key[:])
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
