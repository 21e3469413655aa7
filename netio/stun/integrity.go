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
	want := integrityOf(m.raw[:m.integrity], key)
	return subtle.ConstantTimeCompare(got, want[:]) == 1
}

// integrityOf computes the MESSAGE-INTEGRITY-SHA256 value for an attribute
// that would start at len(prefix).
func integrityOf(prefix, key []byte) [32]byte {
	var buf [MaxDatagram]byte
	n := copy(buf[:], prefix)
	binary.BigEndian.PutUint16(buf[2:4], uint16(n-HeaderSize+4+IntegritySize))
	return engine.HMACSHA256(key, buf[:n])
}
