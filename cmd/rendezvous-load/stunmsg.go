package main

import (
	"crypto/subtle"
	"encoding/binary"
	"hash/crc32"
	"net/netip"
)

// A minimal STUN encoder/decoder for the datagrams the load tester sends and
// the answers it reads (CONTRACT.md §4). It is deliberately independent of
// the server's netio/stun codec, so the load tester also checks the wire.
// Every function here works on caller-owned buffers and does not allocate.

const (
	stunHeaderLen   = 20
	stunMagic       = 0x2112A442
	stunFingerXor   = 0x5354554e
	typeBindingReq  = 0x0001
	typeBindingOK   = 0x0101
	typeBindingErr  = 0x0111
	attrUsername    = 0x0006
	attrErrorCode   = 0x0009
	attrXorMapped   = 0x0020
	attrXorPeer     = 0x0012
	attrIntegrity   = 0x001C // MESSAGE-INTEGRITY-SHA256
	attrFingerprint = 0x8028
	attrSequence    = 0xC001
	attrLocalAddr   = 0xC002
	attrAttempt     = 0xC003
	attrLifetime    = 0xC004
	methodOffer     = 0x0F1
	methodIntroduce = 0x0F2
)

// indicationType returns the message type of an indication of method m.
func indicationType(m uint16) uint16 {
	return m&0x000F | (m&0x0070)<<1 | (m&0x0F80)<<2 | 0x0010
}

var (
	typeOffer     = indicationType(methodOffer)
	typeIntroduce = indicationType(methodIntroduce)
)

// stunRequest describes one authenticated Binding request.
type stunRequest struct {
	TxID     [12]byte
	Kind     byte // 'p', 'h' or 'c'
	Handle   UUID
	Key      *Capability
	Sequence uint64 // presence only; 0 means absent
	Local    netip.AddrPort
}

// appendAttrHeader appends an attribute header.
func appendAttrHeader(b []byte, typ uint16, n int) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(b, typ), uint16(n))
}

// appendXorAddr appends an XOR-encoded address value (type given).
func appendXorAddr(b []byte, typ uint16, ap netip.AddrPort, tx *[12]byte) []byte {
	a := ap.Addr().Unmap()
	if a.Is4() {
		b = appendAttrHeader(b, typ, 8)
		b = append(b, 0, 1)
		b = binary.BigEndian.AppendUint16(b, ap.Port()^uint16(stunMagic>>16))
		v := a.As4()
		x := binary.BigEndian.Uint32(v[:]) ^ stunMagic
		return binary.BigEndian.AppendUint32(b, x)
	}
	b = appendAttrHeader(b, typ, 20)
	b = append(b, 0, 2)
	b = binary.BigEndian.AppendUint16(b, ap.Port()^uint16(stunMagic>>16))
	v := a.As16()
	var key [16]byte
	binary.BigEndian.PutUint32(key[:4], stunMagic)
	copy(key[4:], tx[:])
	for i := range v {
		b = append(b, v[i]^key[i])
	}
	return b
}

// AppendRequest appends the encoded request to dst (which should have room
// for 160 bytes to avoid growing) and returns it.
func (r *stunRequest) AppendRequest(dst []byte) []byte {
	start := len(dst)
	b := binary.BigEndian.AppendUint16(dst, typeBindingReq)
	b = binary.BigEndian.AppendUint16(b, 0) // length, patched below
	b = binary.BigEndian.AppendUint32(b, stunMagic)
	b = append(b, r.TxID[:]...)
	// USERNAME "<kind>:<uuid>" is 38 bytes, padded to 40.
	b = appendAttrHeader(b, attrUsername, 38)
	b = append(b, r.Kind, ':')
	b = r.Handle.AppendText(b)
	b = append(b, 0, 0)
	if r.Sequence != 0 {
		b = appendAttrHeader(b, attrSequence, 8)
		b = binary.BigEndian.AppendUint64(b, r.Sequence)
	}
	if r.Local.IsValid() {
		b = appendXorAddr(b, attrLocalAddr, r.Local, &r.TxID)
	}
	// MESSAGE-INTEGRITY-SHA256 over the message with the length field
	// counting up to and including this attribute (RFC 8489 §14.6).
	setLen(b[start:], len(b)-start-stunHeaderLen+4+32)
	mac := hmacSHA256(r.Key[:], b[start:])
	b = appendAttrHeader(b, attrIntegrity, 32)
	b = append(b, mac[:]...)
	return appendFingerprint(b, start)
}

// AppendPlainBinding appends an unauthenticated Binding request with FINGERPRINT.
func AppendPlainBinding(dst []byte, tx *[12]byte) []byte {
	start := len(dst)
	b := binary.BigEndian.AppendUint16(dst, typeBindingReq)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint32(b, stunMagic)
	b = append(b, tx[:]...)
	return appendFingerprint(b, start)
}

func setLen(msg []byte, n int) { binary.BigEndian.PutUint16(msg[2:4], uint16(n)) }

func appendFingerprint(b []byte, start int) []byte {
	setLen(b[start:], len(b)-start-stunHeaderLen+8)
	crc := crc32.ChecksumIEEE(b[start:]) ^ stunFingerXor
	b = appendAttrHeader(b, attrFingerprint, 4)
	return binary.BigEndian.AppendUint32(b, crc)
}

// stunAnswer is what the load tester needs from a datagram it receives.
// Attempts aliases the datagram buffer: valid until the buffer is reused.
type stunAnswer struct {
	Type      uint16
	TxID      [12]byte
	ErrCode   int // 0 when absent
	Attempts  [4]UUID
	NAttempts int
	Username  []byte
	HasPeer   bool
	// IntegrityOff is the offset of MESSAGE-INTEGRITY-SHA256 in the
	// datagram, or -1 when the answer is unsigned.
	IntegrityOff int
}

// parseAnswer decodes the header and the attributes the load tester reads.
// It reports false for anything that is not a well-formed STUN message.
func parseAnswer(b []byte, a *stunAnswer) bool {
	if len(b) < stunHeaderLen || b[0]&0xC0 != 0 || binary.BigEndian.Uint32(b[4:8]) != stunMagic {
		return false
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n%4 != 0 || n != len(b)-stunHeaderLen {
		return false
	}
	a.Type = binary.BigEndian.Uint16(b[0:2])
	copy(a.TxID[:], b[8:20])
	a.ErrCode, a.NAttempts, a.Username, a.HasPeer, a.IntegrityOff = 0, 0, nil, false, -1
	p := b[stunHeaderLen:]
	for len(p) >= 4 {
		typ := binary.BigEndian.Uint16(p[0:2])
		l := int(binary.BigEndian.Uint16(p[2:4]))
		padded := (l + 3) &^ 3
		if 4+padded > len(p) {
			return false
		}
		v := p[4 : 4+l]
		switch typ {
		case attrErrorCode:
			if l >= 4 {
				a.ErrCode = int(v[2]&0x7)*100 + int(v[3])
			}
		case attrAttempt:
			if l == 16 && a.NAttempts < len(a.Attempts) {
				copy(a.Attempts[a.NAttempts][:], v)
				a.NAttempts++
			}
		case attrUsername:
			a.Username = v
		case attrXorPeer:
			a.HasPeer = true
		case attrIntegrity:
			if l == 32 && a.IntegrityOff < 0 {
				a.IntegrityOff = len(b) - len(p)
			}
		}
		p = p[4+padded:]
	}
	return len(p) == 0
}

// verifyIntegrity checks a signed answer's MESSAGE-INTEGRITY-SHA256 (RFC
// 8489 §14.6) with key. It patches the length field of b while computing and
// restores it, so b must not be read concurrently; it does not allocate.
func verifyIntegrity(b []byte, off int, key *Capability) bool {
	if off < stunHeaderLen || off+4+32 > len(b) {
		return false
	}
	saved := binary.BigEndian.Uint16(b[2:4])
	setLen(b, off-stunHeaderLen+4+32)
	mac := hmacSHA256(key[:], b[:off])
	binary.BigEndian.PutUint16(b[2:4], saved)
	return subtle.ConstantTimeCompare(mac[:], b[off+4:off+4+32]) == 1
}
