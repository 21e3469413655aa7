package netio

import (
	"encoding/binary"
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// push is a datagram the mediator sends unasked (an OFFER, or an
// INTRODUCE or RELAY-INTRODUCE to the side whose bind did not complete the
// attempt) described by what any instance needs to build it: no
// capability, since each is derived again from the shared keyring by the
// instance that signs it.
type push struct {
	kind     byte           // pushOffer, pushRelayHost, pushRelayClient, or the INTRODUCE recipient's kind (stun.KindAttemptHost, stun.KindAttemptClient)
	handle   engine.Handle  // the attempt
	presence engine.Handle  // the host's presence handle: signs the OFFER, derives the host's attempt capability
	lifetime uint32         // OFFER: RDV-LIFETIME, seconds
	dst      netip.AddrPort // the recipient's public endpoint
	peer     engine.Binding // INTRODUCE: the other side's endpoints; RELAY-INTRODUCE: Public is the other side's relayed address
}

// Push kinds other than the INTRODUCE ones (which are USERNAME kinds).
const (
	pushOffer       = 'o'
	pushRelayHost   = 'H' // RELAY-INTRODUCE to the host
	pushRelayClient = 'C' // RELAY-INTRODUCE to the client
)

// recipient returns the USERNAME kind of an INTRODUCE or RELAY-INTRODUCE
// push's recipient, and whether it is a RELAY-INTRODUCE.
func (p *push) recipient() (kind byte, relay bool) {
	switch p.kind {
	case pushRelayHost:
		return stun.KindAttemptHost, true
	case pushRelayClient:
		return stun.KindAttemptClient, true
	}
	return p.kind, false
}

// The payload that carries a push through a Forwarder: a version byte, the
// kind, the two handles (16 bytes each), the lifetime (4, big-endian), then
// dst, peer public and peer local, each one length byte and netip's binary
// form (0 bytes for none). pushPayloadMax is its largest size (IPv6 with a
// zone is refused: a zone names an interface of one machine).
const (
	pushVersion    = 2 // 2: sealed (forward_mac.go); an instance of version 1 and one of 2 drop each other's pushes
	pushPayloadMax = 2 + 16 + 16 + 4 + 3*(1+18)
)

func (p *push) appendPayload(b []byte) []byte {
	b = append(b, pushVersion, p.kind)
	b = append(b, p.handle.UUID[:]...)
	b = append(b, p.presence.UUID[:]...)
	b = binary.BigEndian.AppendUint32(b, p.lifetime)
	for _, ap := range [...]netip.AddrPort{p.dst, p.peer.Public, p.peer.Local} {
		b = appendPushAddr(b, ap)
	}
	return b
}

func appendPushAddr(b []byte, ap netip.AddrPort) []byte {
	if !ap.IsValid() {
		return append(b, 0)
	}
	at := len(b)
	b, _ = ap.AppendBinary(append(b, 0)) // never fails
	b[at] = byte(len(b) - at - 1)
	return b
}

// parsePayload reads a payload appendPayload made; false for anything
// else (another version, a kind no instance sends, a push without a
// destination, an INTRODUCE without a peer, or a RELAY-INTRODUCE without
// the peer's relayed address or with a LAN address).
func (p *push) parsePayload(s string) bool {
	const fixed = 2 + 16 + 16 + 4
	if len(s) < fixed || s[0] != pushVersion {
		return false
	}
	p.kind = s[1]
	copy(p.handle.UUID[:], s[2:18])
	copy(p.presence.UUID[:], s[18:34])
	p.lifetime = binary.BigEndian.Uint32([]byte(s[34:38]))
	s = s[fixed:]
	for _, ap := range [...]*netip.AddrPort{&p.dst, &p.peer.Public, &p.peer.Local} {
		var ok bool
		if s, ok = parsePushAddr(s, ap); !ok {
			return false
		}
	}
	switch p.kind {
	case pushOffer:
		return len(s) == 0 && p.dst.IsValid()
	case stun.KindAttemptHost, stun.KindAttemptClient:
		return len(s) == 0 && p.dst.IsValid() && p.peer.Public.IsValid()
	case pushRelayHost, pushRelayClient:
		return len(s) == 0 && p.dst.IsValid() && p.peer.Public.IsValid() && !p.peer.Local.IsValid()
	}
	return false
}

func parsePushAddr(s string, ap *netip.AddrPort) (string, bool) {
	if len(s) < 1 || len(s) < 1+int(s[0]) {
		return s, false
	}
	n := int(s[0])
	*ap = netip.AddrPort{}
	if n == 0 {
		return s[1:], true
	}
	if err := ap.UnmarshalBinary([]byte(s[1 : 1+n])); err != nil || ap.Addr().Zone() != "" || !ap.IsValid() {
		return s, false
	}
	return s[1+n:], true
}

// encodePush builds p's datagram into buf, signed with the recipient's
// capability derived from keys.
func encodePush(buf []byte, keys *engine.Keyring, p *push) []byte {
	if p.kind == pushOffer {
		return encodeOffer(buf, keys, p.presence, p.handle, p.lifetime)
	}
	kind, relay := p.recipient()
	var key engine.Capability
	if kind == stun.KindAttemptHost {
		pc := keys.Presence(p.presence)
		key = engine.HostAttemptCapability(&pc, p.handle)
	} else {
		key = keys.AttemptClient(p.handle)
	}
	var b stun.Builder
	if relay {
		b = stun.NewBuilder(buf, stun.RelayIntroduceIndication, relayIndicationTxID(kind, p.handle))
		addRelayIntroduceBody(&b, kind, p.handle, p.peer.Public)
	} else {
		b = stun.NewBuilder(buf, stun.IntroduceIndication, indicationTxID(kind, p.handle))
		addIntroduceBody(&b, kind, p.handle, p.peer)
	}
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	clear(key[:])
	return b.Bytes()
}

// sendPush sends p from the socket of its destination's family (a push
// received from another instance, or an OFFER created here).
func (m *Mediator) sendPush(buf []byte, p *push) {
	meth := methodIntroduce
	if p.kind == pushOffer {
		meth = methodOffer
	} else if _, relay := p.recipient(); relay {
		meth = methodRelayIntroduce
	}
	c := m.connFor(p.dst)
	if c == nil || !p.dst.IsValid() {
		if p.kind == pushOffer {
			m.met.drops[dropOfferRoute].Inc()
		} else {
			m.met.drops[dropSendFailed].Inc() // as divert counts an INTRODUCE no socket can carry
		}
		return
	}
	if err := c.WriteTo(encodePush(buf, m.keys, p), p.dst); err != nil {
		m.met.drops[dropSendFailed].Inc()
		return
	}
	m.met.out.Inc()
	m.met.answers[meth][resOK].Inc()
	if p.kind == pushOffer {
		queueMark(m.marks, p.handle)
	}
}
