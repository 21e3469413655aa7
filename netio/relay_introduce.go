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

func (p *processor) relayIntroduceOne(r *request, kind byte, h engine.Handle, pads *engine.HMACKey, to, peerRelayed netip.AddrPort) {
	if !to.IsValid() || !peerRelayed.IsValid() {
		return
	}
	s := p.slot(to, indicationLocal(r, to))
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
