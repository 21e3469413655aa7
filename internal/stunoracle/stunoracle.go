// Package stunoracle computes and checks MESSAGE-INTEGRITY-SHA256 per RFC 8489
// §14.6 with crypto/hmac over raw bytes, pion/stun's or a raw datagram's, so
// the interoperability tests of the STUN codec, the mediator and the load
// tester share one oracle that never uses netio/stun. Only tests import it.
package stunoracle

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"

	pion "github.com/pion/stun/v3"
)

const (
	headerSize = 20
	macSize    = 32
)

// Errors of Verify.
var (
	ErrUnsigned = errors.New("no MESSAGE-INTEGRITY-SHA256")
	ErrMismatch = errors.New("MESSAGE-INTEGRITY-SHA256 does not verify")
)

// Integrity is the MESSAGE-INTEGRITY-SHA256 value of the attribute placed at
// off in raw: the HMAC over raw[:off] with the header's length counting the
// message up to the end of that attribute.
func Integrity(raw []byte, off int, key []byte) []byte {
	in := append([]byte(nil), raw[:off]...)
	binary.BigEndian.PutUint16(in[2:4], uint16(off-headerSize+4+macSize))
	mac := hmac.New(sha256.New, key)
	mac.Write(in)
	return mac.Sum(nil)
}

// Sign adds MESSAGE-INTEGRITY-SHA256 to m (pion only names the attribute).
func Sign(m *pion.Message, key []byte) {
	m.Add(pion.AttrMessageIntegritySHA256, Integrity(m.Raw, len(m.Raw), key))
}

// Build is the pion message of setters, signed with key (unless key is nil),
// ending with FINGERPRINT; a setter's error fails t.
func Build(t testing.TB, key []byte, setters ...pion.Setter) *pion.Message {
	t.Helper()
	m, err := pion.Build(setters...)
	if err != nil {
		t.Fatal(err)
	}
	if key != nil {
		Sign(m, key)
	}
	if err := pion.Fingerprint.AddTo(m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Verify finds MESSAGE-INTEGRITY-SHA256 in the STUN message raw and checks it
// with key: ErrUnsigned without the attribute, ErrMismatch when it does not
// verify.
func Verify(raw, key []byte) error {
	off := headerSize
	for off+4 <= len(raw) {
		typ := pion.AttrType(binary.BigEndian.Uint16(raw[off:]))
		l := int(binary.BigEndian.Uint16(raw[off+2:]))
		if typ == pion.AttrMessageIntegritySHA256 {
			if l != macSize || off+4+l > len(raw) || !hmac.Equal(Integrity(raw, off, key), raw[off+4:off+4+l]) {
				return ErrMismatch
			}
			return nil
		}
		off += 4 + (l+3)&^3
	}
	return ErrUnsigned
}
