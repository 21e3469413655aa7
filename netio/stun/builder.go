package stun

import (
	"encoding/binary"
	"hash/crc32"
	"net/netip"

	"github.com/rendezvous/rendezvous/engine"
)

// Builder writes one STUN message into a caller-owned buffer. It never grows
// the buffer: an attribute that does not fit sets ErrBufferFull, after which
// every Add is a no-op and Bytes returns nil. Add attributes in wire order;
// AddIntegritySHA256 and then AddFingerprint come last.
//
// A Builder is a small value meant to live on the stack:
//
//	b := stun.NewBuilder(buf[:0], stun.BindingRequest, txID)
//	b.AddUsername(u[:])
//	b.AddIntegritySHA256(key)
//	b.AddFingerprint()
//	msg := b.Bytes() // aliases buf
type Builder struct {
	buf []byte
	err error
}

// NewBuilder starts a message of type msgType in buf (its capacity is the
// limit; its contents are overwritten).
func NewBuilder(buf []byte, msgType uint16, txID [12]byte) Builder {
	b := Builder{buf: buf[:0]}
	if cap(buf) < HeaderSize {
		b.err = ErrBufferFull
		return b
	}
	b.buf = b.buf[:HeaderSize]
	binary.BigEndian.PutUint16(b.buf[0:2], msgType&0x3FFF)
	binary.BigEndian.PutUint16(b.buf[2:4], 0)
	binary.BigEndian.PutUint32(b.buf[4:8], MagicCookie)
	copy(b.buf[8:20], txID[:])
	return b
}

// fail records err unless an earlier error is recorded.
func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Err returns the first error, or nil.
func (b *Builder) Err() error { return b.err }

// Len is the number of bytes written so far.
func (b *Builder) Len() int { return len(b.buf) }

// Bytes returns the message, aliasing the buffer given to NewBuilder, or nil
// after an error.
func (b *Builder) Bytes() []byte {
	if b.err != nil {
		return nil
	}
	return b.buf
}

// add appends an attribute header and returns its value, zero-padded to a
// multiple of 4 (nil on error). The header length is updated.
func (b *Builder) add(t uint16, n int) []byte {
	if b.err != nil {
		return nil
	}
	if n > 0xFFFF {
		b.err = ErrBadValue
		return nil
	}
	padded := (n + 3) &^ 3
	off := len(b.buf)
	if cap(b.buf)-off < 4+padded {
		b.err = ErrBufferFull
		return nil
	}
	b.buf = b.buf[:off+4+padded]
	binary.BigEndian.PutUint16(b.buf[off:], t)
	binary.BigEndian.PutUint16(b.buf[off+2:], uint16(n))
	clear(b.buf[off+4+n:])
	binary.BigEndian.PutUint16(b.buf[2:4], uint16(len(b.buf)-HeaderSize))
	return b.buf[off+4 : off+4+n]
}

// AddBytes adds an attribute with a raw value.
func (b *Builder) AddBytes(t uint16, v []byte) {
	if d := b.add(t, len(v)); d != nil {
		copy(d, v)
	}
}

// AddUsername adds USERNAME.
func (b *Builder) AddUsername(u []byte) { b.AddBytes(AttrUsername, u) }

// AddAttempt adds RDV-ATTEMPT with the 16 raw handle bytes.
func (b *Builder) AddAttempt(h engine.Handle) { b.AddBytes(AttrAttempt, h.UUID[:]) }

// AddUint64 adds an 8-byte big-endian value (RDV-SEQUENCE).
func (b *Builder) AddUint64(t uint16, v uint64) {
	if d := b.add(t, 8); d != nil {
		binary.BigEndian.PutUint64(d, v)
	}
}

// AddUint32 adds a 4-byte big-endian value (RDV-LIFETIME).
func (b *Builder) AddUint32(t uint16, v uint32) {
	if d := b.add(t, 4); d != nil {
		binary.BigEndian.PutUint32(d, v)
	}
}

// AddXORAddress adds an XOR-encoded endpoint (RFC 8489 §14.2). An IPv4-mapped
// IPv6 address is encoded as IPv4. An invalid endpoint sets ErrBadValue.
func (b *Builder) AddXORAddress(t uint16, ap netip.AddrPort) {
	a := ap.Addr().Unmap()
	if !a.IsValid() {
		b.fail(ErrBadValue)
		return
	}
	n := 20
	if a.Is4() {
		n = 8
	}
	d := b.add(t, n)
	if d == nil {
		return
	}
	d[0] = 0
	binary.BigEndian.PutUint16(d[2:4], ap.Port()^uint16(MagicCookie>>16))
	if a.Is4() {
		d[1] = 1
		v4 := a.As4()
		binary.BigEndian.PutUint32(d[4:8], binary.BigEndian.Uint32(v4[:])^MagicCookie)
		return
	}
	d[1] = 2
	var txID [12]byte
	copy(txID[:], b.buf[8:20])
	key := xorKey(&txID)
	v6 := a.As16()
	for i := range v6 {
		d[4+i] = v6[i] ^ key[i]
	}
}

// AddOutcome adds RDV-OUTCOME: path (PathDirect, PathRelayed, PathFailed),
// three zero bytes, millis big-endian. Another path sets ErrBadValue.
func (b *Builder) AddOutcome(path byte, millis uint32) {
	if path < PathDirect || path > PathFailed {
		b.fail(ErrBadValue)
		return
	}
	if d := b.add(AttrOutcome, OutcomeSize); d != nil {
		d[0], d[1], d[2], d[3] = path, 0, 0, 0
		binary.BigEndian.PutUint32(d[4:8], millis)
	}
}

// AddErrorCode adds ERROR-CODE (code 300-699) with a reason phrase.
func (b *Builder) AddErrorCode(code int, reason string) {
	if code < 300 || code > 699 || len(reason) > 128 {
		b.fail(ErrBadValue)
		return
	}
	d := b.add(AttrErrorCode, 4+len(reason))
	if d == nil {
		return
	}
	d[0], d[1], d[2], d[3] = 0, 0, byte(code/100), byte(code%100)
	copy(d[4:], reason)
}

// AddUnknownAttributes adds UNKNOWN-ATTRIBUTES listing types.
func (b *Builder) AddUnknownAttributes(types []uint16) {
	d := b.add(AttrUnknownAttributes, 2*len(types))
	if d == nil {
		return
	}
	for i, t := range types {
		binary.BigEndian.PutUint16(d[2*i:], t)
	}
}

// AddIntegritySHA256 adds MESSAGE-INTEGRITY-SHA256 keyed by key (at most 64
// bytes; the raw 32 capability bytes here), per RFC 8489 §14.6.
func (b *Builder) AddIntegritySHA256(key []byte) {
	if len(key) > 64 {
		b.fail(ErrBadValue)
		return
	}
	if in, d := b.addIntegrity(); d != nil {
		sum := engine.HMACSHA256(key, in)
		copy(d, sum[:])
	}
}

// AddIntegrityWith is AddIntegritySHA256 with the key's precomputed HMAC
// pad states k and the caller's per-goroutine HMAC h (see
// engine.HMAC): same attribute, two SHA-256 blocks fewer. The Builder's
// buffer escapes through h's digest: give it a long-lived buffer.
func (b *Builder) AddIntegrityWith(h *engine.HMAC, k *engine.HMACKey) {
	if in, d := b.addIntegrity(); d != nil {
		sum := h.Sum(k, in)
		copy(d, sum[:])
	}
}

// addIntegrity adds the MESSAGE-INTEGRITY-SHA256 attribute and returns the
// HMAC input (the message before it) and the value to fill, or nil d. add
// set the header length to end after this attribute, exactly as RFC 8489
// §14.6 wants it for the HMAC input.
func (b *Builder) addIntegrity() (in, d []byte) {
	off := len(b.buf)
	if off > MaxDatagram {
		b.fail(ErrBufferFull)
		return nil, nil
	}
	d = b.add(AttrIntegritySHA256, IntegritySize)
	return b.buf[:off], d
}

// AddFingerprint adds FINGERPRINT (RFC 8489 §14.7). It must be the last attribute.
func (b *Builder) AddFingerprint() {
	off := len(b.buf)
	d := b.add(AttrFingerprint, 4)
	if d == nil {
		return
	}
	binary.BigEndian.PutUint32(d, crc32.ChecksumIEEE(b.buf[:off])^fingerprintXOR)
}
