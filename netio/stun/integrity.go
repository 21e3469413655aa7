package stun

import (
	"crypto/subtle"
	"encoding/binary"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckIntegrity verifies MESSAGE-INTEGRITY-SHA256 with key (the raw 32
// capability bytes) as RFC 8489 §14.6 says: HMAC-SHA256 over the message up
// to the attribute, with the header length adjusted to end just after it.
// The comparison is constant-time. False when the attribute is absent.
// Zero allocations; the datagram is not modified.
func (m *Message) CheckIntegrity(key []byte) bool {
	if m.integrity == 0 || len(key) > 64 {
		return false
	}
	got := m.raw[m.integrity+4 : m.integrity+4+IntegritySize]
	// The HMAC input is the message up to the attribute with the header
	// length adjusted; it is assembled in m's scratch space, so the datagram
	// is never written to.
	n := copy(m.scratch[:], m.raw[:m.integrity])
	binary.BigEndian.PutUint16(m.scratch[2:4], uint16(n-HeaderSize+4+IntegritySize))
	want := engine.HMACSHA256(key, m.scratch[:n])
	return subtle.ConstantTimeCompare(got, want[:]) == 1
}

// CheckIntegrityWith is CheckIntegrity with the key's precomputed HMAC pad
// states k and the caller's per-goroutine HMAC h: the message is hashed in
// place (the 20-byte header with its adjusted length from m's scratch, the
// rest straight from the datagram), so nothing is copied and the pads cost
// nothing here. m escapes through h's digest: use a long-lived Message (as
// the mediator's processor does). Zero allocations; the datagram is not
// modified.
func (m *Message) CheckIntegrityWith(h *engine.HMAC, k *engine.HMACKey) bool {
	if m.integrity == 0 {
		return false
	}
	got := m.raw[m.integrity+4 : m.integrity+4+IntegritySize]
	hdr := m.scratch[:HeaderSize]
	copy(hdr, m.raw[:HeaderSize])
	binary.BigEndian.PutUint16(hdr[2:4], uint16(m.integrity-HeaderSize+4+IntegritySize))
	h.Begin(k)
	h.Write(hdr)
	h.Write(m.raw[HeaderSize:m.integrity])
	want := h.End(k)
	return subtle.ConstantTimeCompare(got, want[:]) == 1
}
