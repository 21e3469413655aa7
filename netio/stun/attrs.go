package stun

import (
	"encoding/binary"
	"iter"
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
)

// find returns the value of the first recorded attribute of type t.
func (m *Message) find(t uint16) ([]byte, bool) {
	for i := 0; i < m.nattrs; i++ {
		if a := m.attrs[i]; a.typ == t {
			return m.raw[a.off : int(a.off)+int(a.len)], true
		}
	}
	return nil, false
}

// Bytes returns the value of the first attribute of type t. The slice aliases
// the datagram.
func (m *Message) Bytes(t uint16) ([]byte, bool) { return m.find(t) }

// Has reports whether an attribute of type t was recorded.
func (m *Message) Has(t uint16) bool { _, ok := m.find(t); return ok }

// Username returns the USERNAME value. The slice aliases the datagram.
func (m *Message) Username() ([]byte, bool) {
	if m.username == 0 {
		return nil, false
	}
	a := m.attrs[m.username-1]
	return m.raw[a.off : int(a.off)+int(a.len)], true
}

// Uint64 returns an 8-byte big-endian attribute value (RDV-SEQUENCE). ok is
// false when the attribute is absent or not 8 bytes long.
func (m *Message) Uint64(t uint16) (uint64, bool) {
	v, ok := m.find(t)
	if !ok || len(v) != 8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(v), true
}

// Uint32 returns a 4-byte big-endian attribute value (RDV-LIFETIME).
func (m *Message) Uint32(t uint16) (uint32, bool) {
	v, ok := m.find(t)
	if !ok || len(v) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(v), true
}

// XORAddress decodes an XOR-encoded endpoint attribute (XOR-MAPPED-ADDRESS,
// XOR-PEER-ADDRESS, RDV-LOCAL-ADDRESS, RDV-PEER-LOCAL-ADDRESS,
// RDV-RELAYED-ADDRESS). ok is false
// when it is absent or malformed. IPv4 endpoints are returned unmapped.
func (m *Message) XORAddress(t uint16) (netip.AddrPort, bool) {
	v, ok := m.find(t)
	if !ok {
		return netip.AddrPort{}, false
	}
	return decodeXOR(v, &m.txID)
}

func decodeXOR(v []byte, txID *[12]byte) (netip.AddrPort, bool) {
	if len(v) < 4 || v[0] != 0 {
		return netip.AddrPort{}, false
	}
	port := binary.BigEndian.Uint16(v[2:4]) ^ uint16(MagicCookie>>16)
	switch {
	case v[1] == 1 && len(v) == 8:
		var a [4]byte
		binary.BigEndian.PutUint32(a[:], binary.BigEndian.Uint32(v[4:8])^MagicCookie)
		return netip.AddrPortFrom(netip.AddrFrom4(a), port), true
	case v[1] == 2 && len(v) == 20:
		var a [16]byte
		key := xorKey(txID)
		for i := range a {
			a[i] = v[4+i] ^ key[i]
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), port), true
	}
	return netip.AddrPort{}, false
}

func xorKey(txID *[12]byte) (k [16]byte) {
	binary.BigEndian.PutUint32(k[:4], MagicCookie)
	copy(k[4:], txID[:])
	return k
}

// Outcome decodes RDV-OUTCOME: the path (PathDirect, PathRelayed or
// PathFailed) and the milliseconds from join to connected (or to giving
// up). ok is false when it is absent or malformed: not 8 bytes, a reserved
// byte not zero, or an unknown path.
func (m *Message) Outcome() (path byte, millis uint32, ok bool) {
	v, found := m.find(AttrOutcome)
	if !found || len(v) != OutcomeSize || v[1] != 0 || v[2] != 0 || v[3] != 0 {
		return 0, 0, false
	}
	if v[0] < PathDirect || v[0] > PathFailed {
		return 0, 0, false
	}
	return v[0], binary.BigEndian.Uint32(v[4:8]), true
}

// NumAttempts returns how many well-formed RDV-ATTEMPT attributes there are.
func (m *Message) NumAttempts() int {
	n := 0
	for i := 0; i < m.nattrs; i++ {
		if a := m.attrs[i]; a.typ == AttrAttempt && a.len == 16 {
			n++
		}
	}
	return n
}

// Attempts iterates over the RDV-ATTEMPT handles in order (malformed values,
// not 16 bytes long, are skipped).
func (m *Message) Attempts() iter.Seq[engine.Handle] {
	return func(yield func(engine.Handle) bool) {
		for i := 0; i < m.nattrs; i++ {
			a := m.attrs[i]
			if a.typ != AttrAttempt || a.len != 16 {
				continue
			}
			var h engine.Handle
			copy(h.UUID[:], m.raw[a.off:a.off+16])
			if !yield(h) {
				return
			}
		}
	}
}

// Attempt returns the first RDV-ATTEMPT handle.
func (m *Message) Attempt() (engine.Handle, bool) {
	for h := range m.Attempts() {
		return h, true
	}
	return engine.Handle{}, false
}

// ErrorCode returns the ERROR-CODE code (300-699) and reason phrase. The
// reason aliases the datagram.
func (m *Message) ErrorCode() (code int, reason []byte, ok bool) {
	v, ok := m.find(AttrErrorCode)
	if !ok || len(v) < 4 || v[2]&0x7 < 3 || v[2]&0x7 > 6 || v[3] > 99 {
		return 0, nil, false
	}
	return int(v[2]&0x7)*100 + int(v[3]), v[4:], true
}

// UnknownAttributes appends the types listed in an UNKNOWN-ATTRIBUTES
// attribute to dst (a 420 answer's list).
func (m *Message) UnknownAttributes(dst []uint16) []uint16 {
	v, _ := m.find(AttrUnknownAttributes)
	for i := 0; i+1 < len(v); i += 2 {
		dst = append(dst, binary.BigEndian.Uint16(v[i:]))
	}
	return dst
}
