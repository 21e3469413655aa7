package netio

import (
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// relayIntroduce sends RELAY-INTRODUCE indications: each side learns the
// other side's relayed address on its TURN server, and nothing else (a
// relay-only attempt never reveals a public or LAN address). The bind that
// records the second relayed address consumes the relay introduction and
// both sides get one, each at its bind source; a later bind of a side with
// its relayed address (a retransmission) re-sends that side's only. Signed
// with the recipient's capability; the transaction ID derives from the
// handle, so a re-send is the same datagram.
func (p *processor) relayIntroduce(r *request, op *engine.Op) {
	in := &op.RelayIntro
	h := op.Bind.Handle
	if op.FirstRelay || r.relayed && r.kind == stun.KindAttemptHost {
		p.relayIntroduceOne(r, stun.KindAttemptHost, h, p.sidePads(r, op, stun.KindAttemptHost), op.Attempt.Host.Public, in.Client)
	}
	if op.FirstRelay || r.relayed && r.kind == stun.KindAttemptClient {
		p.relayIntroduceOne(r, stun.KindAttemptClient, h, p.sidePads(r, op, stun.KindAttemptClient), op.Attempt.Peer.Public, in.Host)
	}
	p.peerPads = engine.HMACKey{}
}

// sidePads returns the pad states of the capability of side kind of the
// attempt op bound: the request's own, or the other side's computed into
// p.peerPads (cleared once the indications are signed).
func (p *processor) sidePads(r *request, op *engine.Op, kind byte) *engine.HMACKey {
	if r.kind == kind {
		return &r.pads
	}
	h := op.Bind.Handle
	if kind == stun.KindAttemptHost {
		pc := p.keys.PresenceWith(p.mac, op.Attempt.HostPresence)
		key := engine.HostAttemptCapabilityWith(p.mac, &pc, h)
		return p.otherPads(&key)
	}
	key := p.keys.AttemptClientWith(p.mac, h)
	return p.otherPads(&key)
}

func (p *processor) relayIntroduceOne(r *request, kind byte, h engine.Handle, pads *engine.HMACKey, to, peerRelayed netip.AddrPort) {
	if !to.IsValid() || !peerRelayed.IsValid() {
		return
	}
	// The completing request's destination cannot be the source of a
	// datagram to a peer of the other address family: the kernel chooses.
	local := r.local
	if local.IsValid() && local.Unmap().Is4() != to.Addr().Unmap().Is4() {
		local = netip.Addr{}
	}
	s := p.slot(to, local)
	if s == nil {
		return
	}
	u := stun.Username(kind, h)
	b := stun.NewBuilder(s.buf, stun.RelayIntroduceIndication, relayIndicationTxID(kind, h))
	b.AddUsername(u[:])
	b.AddXORAddress(stun.AttrXORPeerAddress, peerRelayed)
	b.AddIntegrityWith(p.mac, pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[methodRelayIntroduce][resOK]++
	}
}

// relayIndicationTxID is indicationTxID with the first byte's high bit
// flipped, so a side's RELAY-INTRODUCE and INTRODUCE never share a
// transaction ID.
func relayIndicationTxID(kind byte, h engine.Handle) [12]byte {
	tx := indicationTxID(kind, h)
	tx[0] ^= 0x80
	return tx
}
