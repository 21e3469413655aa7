package netio

import (
	"crypto/subtle"
	"encoding/binary"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Forwarded pushes are authenticated. Anyone who can publish on the bus
// (a Redis client with the deployment's password, or one on its network
// without one) could otherwise make an instance send an INTRODUCE signed
// with a real capability, naming any peer address, to any destination: a
// signed lie to a real client, and a reflector. So each payload carries a
// deadline and a MAC under a key derived from the capability key (which
// every instance of a deployment shares and the bus never sees), over the
// target instance's ID, the payload and the deadline. An instance sends
// only what verifies, is addressed to it and is not stale.
//
//	payload ‖ not-after (u64 big-endian, Unix milliseconds) ‖ HMAC-SHA256(forward key, target ‖ payload ‖ not-after)
const (
	// forwardTTL is how long a forwarded push stays valid: a push is useful
	// for a retransmission interval or so, and a late one is recovered like
	// a lost one.
	forwardTTL = 2 * time.Second
	// forwardSkew is the clock difference between instances tolerated on
	// both sides of the deadline (keep their clocks in sync: NTP).
	forwardSkew = time.Second
	forwardMAC  = 32
	// forwardTrailer is what sealing adds to a payload.
	forwardTrailer = 8 + forwardMAC
)

// forwardKey holds the forward key's HMAC pad states; each goroutine that
// seals or opens uses its own engine.HMAC with it.
type forwardKey struct{ pads engine.HMACKey }

func newForwardKey(keys *engine.Keyring) *forwardKey {
	k := keys.ForwardKey()
	f := &forwardKey{}
	engine.NewHMAC().SetKey(&f.pads, k[:])
	clear(k[:])
	return f
}

// seal appends the deadline (now + forwardTTL) and the MAC for instance to
// to payload b.
func (f *forwardKey) seal(h *engine.HMAC, b []byte, to engine.UUID, now time.Time) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(now.Add(forwardTTL).UnixMilli()))
	h.Begin(&f.pads)
	h.Write(to[:])
	h.Write(b)
	mac := h.End(&f.pads)
	return append(b, mac[:]...)
}

// openResult says what open made of a sealed payload.
type openResult uint8

const (
	openOK     openResult = iota
	openForged            // too short, or the MAC does not verify for this instance
	openStale             // authentic, but past its deadline (or too far ahead of this clock)
)

// open checks a sealed payload addressed to self at now and returns the
// push payload inside it.
func (f *forwardKey) open(h *engine.HMAC, s []byte, self engine.UUID, now time.Time) ([]byte, openResult) {
	if len(s) < forwardTrailer {
		return nil, openForged
	}
	body := s[:len(s)-forwardMAC]
	h.Begin(&f.pads)
	h.Write(self[:])
	h.Write(body)
	mac := h.End(&f.pads)
	if subtle.ConstantTimeCompare(mac[:], s[len(body):]) != 1 {
		return nil, openForged
	}
	notAfter := int64(binary.BigEndian.Uint64(body[len(body)-8:]))
	nowMS := now.UnixMilli()
	if nowMS > notAfter+forwardSkew.Milliseconds() || notAfter > nowMS+(forwardTTL+forwardSkew).Milliseconds() {
		return nil, openStale
	}
	return body[:len(body)-8], openOK
}
