package stun

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// FuzzParse: Parse never panics, never reads past the datagram, and every
// accessor is safe on whatever it accepted.
func FuzzParse(f *testing.F) {
	key := bytes.Repeat([]byte{3}, 32)
	u := Username(KindPresence, engine.Handle{UUID: engine.NewUUID()})
	b := NewBuilder(make([]byte, 0, 600), BindingRequest, testTx)
	b.AddUsername(u[:])
	b.AddUint64(AttrSequence, 7)
	b.AddXORAddress(AttrLocalAddress, netip.MustParseAddrPort("[2001:db8::1]:9"))
	b.AddAttempt(engine.Handle{})
	b.AddErrorCode(420, "x")
	b.AddUnknownAttributes([]uint16{1, 2})
	b.AddIntegritySHA256(key)
	b.AddFingerprint()
	f.Add(b.Bytes())
	f.Add([]byte{0, 1, 0, 0, 0x21, 0x12, 0xA4, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, data []byte) {
		orig := append([]byte(nil), data...)
		var m Message
		if Parse(data, &m) != nil {
			return
		}
		m.Username()
		m.XORAddress(AttrXORMappedAddress)
		m.XORAddress(AttrLocalAddress)
		m.Uint64(AttrSequence)
		m.Uint32(AttrLifetime)
		m.ErrorCode()
		m.UnknownAttributes(nil)
		for range m.Attempts() {
		}
		m.CheckIntegrity(key)
		if name, ok := m.Username(); ok {
			ParseUsername(name)
		}
		if !bytes.Equal(orig, data) {
			t.Fatal("Parse or an accessor modified the datagram")
		}
	})
}
