package stun

import (
	"encoding/binary"
	"hash/crc32"
)

// Bounds of what one Message records. A datagram of at most MaxDatagram bytes
// may hold more attributes; the recognised ones beyond maxAttrs make it
// malformed (ErrTooManyAttrs), unknown comprehension-required ones beyond
// maxUnknown are not listed (a 420 names the first maxUnknown).
const (
	maxAttrs   = 24
	maxUnknown = 8
)

type attr struct{ typ, off, len uint16 } // off: offset of the value in raw

// Message is a parsed STUN message. It aliases the datagram given to Parse:
// the datagram must not change while the Message is used, and every []byte an
// accessor returns is valid only as long as the datagram is. The zero value
// is an empty message; Parse overwrites all of it, so one Message can be
// reused for every datagram without allocating.
type Message struct {
	raw         []byte
	typ         uint16
	txID        [12]byte
	attrs       [maxAttrs]attr
	nattrs      int
	username    int // 1 + index in attrs, 0 = absent
	integrity   int // offset of the MESSAGE-INTEGRITY-SHA256 attribute header, 0 = absent
	fingerprint int // offset of the FINGERPRINT attribute header, 0 = absent
	unknown     [maxUnknown]uint16
	nunknown    int
	scratch     [MaxDatagram]byte // CheckIntegrity's HMAC input
}

// Parse decodes b into m. It enforces docs/contracts/udp.md#acceptance: b is at most
// MaxDatagram bytes, the top two type bits are zero, the magic cookie is
// right, the length field is a multiple of 4 equal to len(b)-20, no attribute
// overruns the message, FINGERPRINT (if present) is last and matches, and
// USERNAME and the integrity attributes are not duplicated. Attributes after
// MESSAGE-INTEGRITY(-SHA256) other than FINGERPRINT are ignored (RFC 8489
// §14.5). Unknown comprehension-required attributes are recorded (Unknown),
// not rejected. On error m is left in an unspecified state. Zero allocations.
func Parse(b []byte, m *Message) error {
	m.raw = nil
	m.nattrs, m.username, m.integrity, m.fingerprint, m.nunknown = 0, 0, 0, 0, 0
	if len(b) < HeaderSize {
		return ErrTooShort
	}
	if len(b) > MaxDatagram {
		return ErrTooLong
	}
	if b[0]&0xC0 != 0 || binary.BigEndian.Uint32(b[4:8]) != MagicCookie {
		return ErrNotSTUN
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n%4 != 0 || n != len(b)-HeaderSize {
		return ErrLength
	}
	m.typ = binary.BigEndian.Uint16(b[0:2])
	copy(m.txID[:], b[8:20])
	sha1Integrity, sawUsername := false, false
	for off := HeaderSize; off < len(b); {
		if m.fingerprint != 0 {
			return ErrAfterFingerprint
		}
		if len(b)-off < 4 {
			return ErrAttrOverrun
		}
		t := binary.BigEndian.Uint16(b[off:])
		l := int(binary.BigEndian.Uint16(b[off+2:]))
		padded := (l + 3) &^ 3
		if padded > len(b)-off-4 {
			return ErrAttrOverrun
		}
		v := off + 4
		switch {
		case t == AttrFingerprint:
			if l != 4 {
				return ErrAttrValue
			}
			m.fingerprint = off
		case t == AttrIntegritySHA256:
			if m.integrity != 0 {
				return ErrDuplicate
			}
			if l != IntegritySize {
				return ErrAttrValue
			}
			m.integrity = off
		case t == AttrMessageIntegrity:
			if sha1Integrity {
				return ErrDuplicate
			}
			sha1Integrity = true
		case t == AttrUsername && (m.username != 0 || sawUsername):
			return ErrDuplicate
		case m.integrity != 0 || sha1Integrity:
			// Ignored after an integrity attribute (RFC 8489 §14.5, §14.6).
			sawUsername = sawUsername || t == AttrUsername
		case recognised(t):
			if m.nattrs == maxAttrs {
				return ErrTooManyAttrs
			}
			if t == AttrUsername {
				m.username = m.nattrs + 1
				sawUsername = true
			}
			m.attrs[m.nattrs] = attr{t, uint16(v), uint16(l)}
			m.nattrs++
		case ComprehensionRequired(t):
			if m.nunknown < maxUnknown {
				m.unknown[m.nunknown] = t
				m.nunknown++
			}
		}
		off = v + padded
	}
	if m.fingerprint != 0 {
		want := binary.BigEndian.Uint32(b[m.fingerprint+4:])
		if crc32.ChecksumIEEE(b[:m.fingerprint])^fingerprintXOR != want {
			return ErrFingerprint
		}
	}
	m.raw = b
	return nil
}

func recognised(t uint16) bool {
	switch t {
	case AttrUsername, AttrErrorCode, AttrUnknownAttributes, AttrXORPeerAddress,
		AttrXORMappedAddress, AttrSequence, AttrLocalAddress, AttrAttempt,
		AttrLifetime, AttrPeerLocalAddress, AttrRelayedAddress, AttrOutcome, AttrRelayOnly:
		return true
	}
	return false
}

// Raw returns the datagram m was parsed from.
func (m *Message) Raw() []byte { return m.raw }

// Type returns the 14-bit message type.
func (m *Message) Type() uint16 { return m.typ }

// Method returns the message's method.
func (m *Message) Method() uint16 { return Method(m.typ) }

// Class returns the message's class bits.
func (m *Message) Class() uint16 { return Class(m.typ) }

// TransactionID returns the 96-bit transaction ID.
func (m *Message) TransactionID() [12]byte { return m.txID }

// HasFingerprint reports whether the message ended with a FINGERPRINT (which
// Parse has verified).
func (m *Message) HasFingerprint() bool { return m.fingerprint != 0 }

// HasIntegrity reports whether the message carries MESSAGE-INTEGRITY-SHA256.
func (m *Message) HasIntegrity() bool { return m.integrity != 0 }

// Unknown returns the unknown comprehension-required attribute types, in
// order of appearance (at most 8). The slice aliases m.
func (m *Message) Unknown() []uint16 { return m.unknown[:m.nunknown] }
