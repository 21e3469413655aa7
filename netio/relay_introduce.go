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
// its relayed address (a retransmission) re-sends that side's only; the
// other side's is forwarded when its bind reached another instance. Signed
// with the recipient's capability; the transaction ID derives from the
// handle, so a re-send is the same datagram.
func (p *processor) relayIntroduce(r *request, op *engine.Op) {
	in := &op.RelayIntro
	if op.FirstRelay || r.relayed && r.kind == stun.KindAttemptHost {
		p.relayIntroduceSide(r, op, stun.KindAttemptHost, op.Attempt.HostInstance, op.Attempt.Host.Public, in.Client)
	}
	if op.FirstRelay || r.relayed && r.kind == stun.KindAttemptClient {
		p.relayIntroduceSide(r, op, stun.KindAttemptClient, op.Attempt.PeerInstance, op.Attempt.Peer.Public, in.Host)
	}
	p.peerPads = engine.HMACKey{}
}

// relayIntroduceSide sends the RELAY-INTRODUCE to side kind (at to, bound
// through instance at), or, when that side did not send r and its bind
// reached another instance, queues it for that instance as INTRODUCE does
// (its NAT mapping points there): no capability is queued, the sender
// derives it again. A full queue drops it and counts the drop (the side's
// bind retransmission with its relayed address recovers it).
func (p *processor) relayIntroduceSide(r *request, op *engine.Op, kind byte, at engine.UUID, to, peerRelayed netip.AddrPort) {
	if !to.IsValid() || !peerRelayed.IsValid() {
		return
	}
	if r.kind != kind && p.fwd.remote(at) {
		pk := byte(pushRelayClient)
		if kind == stun.KindAttemptHost {
			pk = pushRelayHost
		}
		ps := push{kind: pk, handle: op.Bind.Handle, presence: op.Attempt.HostPresence, dst: to, peer: engine.Binding{Public: peerRelayed}}
		if !p.fwd.enqueue(at, &ps) {
			p.stats.drops[dropForwardQueue]++
		}
		return
	}
	p.relayIntroduceOne(r, kind, op.Bind.Handle, p.sidePads(r, op, kind), to, peerRelayed)
}

func (p *processor) relayIntroduceOne(r *request, kind byte, h engine.Handle, pads *engine.HMACKey, to, peerRelayed netip.AddrPort) {
	s := p.indicationSlot(r, to)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.RelayIntroduceIndication, relayIndicationTxID(kind, h))
	addRelayIntroduceBody(&b, kind, h, peerRelayed)
	p.sendIndication(s, &b, pads, methodRelayIntroduce)
}

// addRelayIntroduceBody adds a RELAY-INTRODUCE's attributes before its
// signature: the recipient's USERNAME and the peer's relayed address.
func addRelayIntroduceBody(b *stun.Builder, kind byte, h engine.Handle, peerRelayed netip.AddrPort) {
	u := stun.Username(kind, h)
	b.AddUsername(u[:])
	b.AddXORAddress(stun.AttrXORPeerAddress, peerRelayed)
}

// relayIndicationTxID is indicationTxID with the first byte's high bit
// flipped, so a side's RELAY-INTRODUCE and INTRODUCE never share a
// transaction ID.
func relayIndicationTxID(kind byte, h engine.Handle) [12]byte {
	tx := indicationTxID(kind, h)
	tx[0] ^= 0x80
	return tx
}
