package stun

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/stunoracle"
)

// The precomputed-pad variants sign and verify exactly as the plain ones, for
// messages across the SHA-256 block edges.
func TestIntegrityWithPads(t *testing.T) {
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	key := bytes.Repeat([]byte{3}, 32)
	h.SetKey(pads, key)
	otherPads := new(engine.HMACKey)
	h.SetKey(otherPads, bytes.Repeat([]byte{4}, 32))
	buf := make([]byte, 0, 600)
	var m Message
	f := func(userLen int) {
		t.Helper()
		b := NewBuilder(buf, BindingRequest, testTx)
		b.AddBytes(AttrUsername, bytes.Repeat([]byte{'u'}, userLen))
		off := b.Len()
		b.AddIntegrityWith(h, pads)
		b.AddFingerprint()
		raw := b.Bytes()
		if raw == nil {
			t.Fatalf("user %d: %v", userLen, b.Err())
		}
		if got := raw[off+4 : off+4+IntegritySize]; !bytes.Equal(got, stunoracle.Integrity(raw, off, key)) {
			t.Fatalf("user %d: AddIntegrityWith differs from the RFC 8489 computation", userLen)
		}
		plain := NewBuilder(make([]byte, 0, 600), BindingRequest, testTx)
		plain.AddBytes(AttrUsername, bytes.Repeat([]byte{'u'}, userLen))
		plain.AddIntegritySHA256(key)
		plain.AddFingerprint()
		if !bytes.Equal(plain.Bytes(), raw) {
			t.Fatalf("user %d: AddIntegrityWith and AddIntegritySHA256 build different messages", userLen)
		}
		if err := Parse(raw, &m); err != nil {
			t.Fatalf("user %d: %v", userLen, err)
		}
		before := append([]byte(nil), raw...)
		if !m.CheckIntegrityWith(h, pads) || !m.CheckIntegrity(key) {
			t.Fatalf("user %d: own signature rejected", userLen)
		}
		if m.CheckIntegrityWith(h, otherPads) {
			t.Fatalf("user %d: accepted with the wrong key", userLen)
		}
		if !bytes.Equal(before, raw) {
			t.Fatalf("user %d: verifying modified the datagram", userLen)
		}
		// Any flipped bit before the attribute (but the length field, which the
		// HMAC input replaces), or in the MAC, fails.
		for _, i := range []int{0, 1, 4, 8, 19, HeaderSize + 4, off - 1, off + 4, off + 4 + IntegritySize - 1} {
			if i >= off && i < off+4 {
				continue // the attribute's own header is not HMAC input
			}
			raw[i] ^= 0x10
			m2 := m
			m2.raw = raw // the fingerprint is not rechecked: integrity alone is under test
			if m2.CheckIntegrityWith(h, pads) {
				t.Fatalf("user %d: flipped byte %d accepted", userLen, i)
			}
			raw[i] ^= 0x10
		}
	}
	for u := 0; u <= 140; u++ {
		f(u)
	}
	// No integrity attribute: false.
	b := NewBuilder(buf, BindingRequest, testTx)
	b.AddFingerprint()
	if err := Parse(b.Bytes(), &m); err != nil || m.CheckIntegrityWith(h, pads) {
		t.Fatal("a message without MESSAGE-INTEGRITY-SHA256 verified")
	}
}

func TestIntegrityWithPadsBounds(t *testing.T) {
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	h.SetKey(pads, bytes.Repeat([]byte{3}, 32))
	// Too little room: ErrBufferFull, nothing written past the buffer.
	small := make([]byte, 0, HeaderSize+8)
	b := NewBuilder(small, BindingSuccess, testTx)
	b.AddIntegrityWith(h, pads)
	if b.Err() != ErrBufferFull || b.Bytes() != nil {
		t.Fatalf("AddIntegrityWith in a full buffer: %v", b.Err())
	}
	// After an earlier error, a no-op.
	b = NewBuilder(make([]byte, 0, 600), BindingSuccess, testTx)
	b.AddErrorCode(99, "x")
	b.AddIntegrityWith(h, pads)
	if b.Err() != ErrBadValue || b.Len() != HeaderSize {
		t.Fatalf("AddIntegrityWith after an error: %v, %d bytes", b.Err(), b.Len())
	}
}

func TestIntegrityWithPadsZeroAllocs(t *testing.T) {
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	key := bytes.Repeat([]byte{1}, 32)
	id := engine.Handle{UUID: engine.NewUUID()}
	buf := make([]byte, 0, 600)
	src := netip.MustParseAddrPort("192.0.2.1:5000")
	m := new(Message)
	allocs := testing.AllocsPerRun(200, func() {
		h.SetKey(pads, key)
		u := Username(KindPresence, id)
		b := NewBuilder(buf, BindingRequest, testTx)
		b.AddUsername(u[:])
		b.AddXORAddress(AttrLocalAddress, src)
		b.AddIntegrityWith(h, pads)
		b.AddFingerprint()
		if Parse(b.Bytes(), m) != nil || !m.CheckIntegrityWith(h, pads) {
			t.Fatal("round trip failed")
		}
	})
	if allocs != 0 && !raceEnabled { // see race_on_test.go
		t.Fatalf("%v allocations per sign+parse+verify with pads, want 0", allocs)
	}
}
