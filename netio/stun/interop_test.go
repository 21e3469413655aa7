package stun

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	pion "github.com/pion/stun/v3"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/stunoracle"
)

// pionVerify checks MESSAGE-INTEGRITY-SHA256 of a message decoded by pion,
// with the oracle of internal/stunoracle (not our codec).
func pionVerify(t *testing.T, m *pion.Message, key []byte) {
	t.Helper()
	if err := stunoracle.Verify(m.Raw, key); err != nil {
		t.Fatalf("pion side: %v", err)
	}
}

func pionDecode(t *testing.T, raw []byte) *pion.Message {
	t.Helper()
	m := &pion.Message{Raw: append([]byte(nil), raw...)}
	if err := m.Decode(); err != nil {
		t.Fatalf("pion Decode: %v", err)
	}
	if err := pion.Fingerprint.Check(m); err != nil {
		t.Fatalf("pion FINGERPRINT check: %v", err)
	}
	return m
}

func TestInteropPionRequestsWeParse(t *testing.T) {
	key := bytes.Repeat([]byte{0xAB}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	u := Username(KindPresence, h)
	f := func(name string, signed bool, setters ...pion.Setter) *Message {
		t.Helper()
		var k []byte
		if signed {
			k = key
		}
		pm := stunoracle.Build(t, k, append([]pion.Setter{pion.TransactionID}, setters...)...)
		var m Message
		if err := Parse(pm.Raw, &m); err != nil {
			t.Fatalf("%s: Parse: %v", name, err)
		}
		if m.TransactionID() != pm.TransactionID || !m.HasFingerprint() {
			t.Fatalf("%s: transaction ID or fingerprint", name)
		}
		if signed && !m.CheckIntegrity(key) {
			t.Fatalf("%s: integrity computed by the oracle rejected", name)
		}
		return &m
	}
	m := f("plain binding", false, pion.BindingRequest)
	if m.Type() != BindingRequest {
		t.Fatalf("type %#x", m.Type())
	}
	seq := make([]byte, 8)
	binary.BigEndian.PutUint64(seq, 42)
	local := &pion.XORMappedAddress{IP: net.ParseIP("192.168.1.20"), Port: 40000}
	m = f("presence", true, pion.BindingRequest, pion.NewUsername(string(u[:])),
		pion.RawAttribute{Type: pion.AttrType(AttrSequence), Value: seq},
		setAs(local, AttrLocalAddress))
	if s, ok := m.Uint64(AttrSequence); !ok || s != 42 {
		t.Fatalf("sequence %d", s)
	}
	if a, ok := m.XORAddress(AttrLocalAddress); !ok || a != netip.MustParseAddrPort("192.168.1.20:40000") {
		t.Fatalf("local %v", a)
	}
	if name, ok := m.Username(); !ok || !bytes.Equal(name, u[:]) {
		t.Fatal("username")
	}
	hu := Username(KindAttemptHost, h)
	f("host bind", true, pion.BindingRequest, pion.NewUsername(string(hu[:])))
	m = f("unknown attribute", true, pion.BindingRequest, pion.NewUsername(string(hu[:])),
		pion.RawAttribute{Type: 0x0031, Value: []byte{1, 2, 3, 4}})
	if len(m.Unknown()) != 1 || m.Unknown()[0] != 0x0031 {
		t.Fatalf("unknown %v", m.Unknown())
	}
}

type setterFunc func(*pion.Message) error

func (f setterFunc) AddTo(m *pion.Message) error { return f(m) }

func setAs(a *pion.XORMappedAddress, t uint16) pion.Setter {
	return setterFunc(func(m *pion.Message) error { return a.AddToAs(m, pion.AttrType(t)) })
}

func TestInteropPionParsesOurAnswers(t *testing.T) {
	key := bytes.Repeat([]byte{0xCD}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	pub := netip.MustParseAddrPort("203.0.113.7:5000")
	pub6 := netip.MustParseAddrPort("[2001:db8::7]:6000")
	f := func(name string, typ uint16, signed bool, attrs ...func(*Builder)) *pion.Message {
		t.Helper()
		raw := build(t, typ, map[bool][]byte{true: key}[signed], true, attrs...)
		pm := pionDecode(t, raw)
		if pm.Type.Method != pion.Method(Method(typ)) {
			t.Fatalf("%s: pion method %v", name, pm.Type.Method)
		}
		if signed {
			pionVerify(t, pm, key)
		}
		return pm
	}
	getXOR := func(pm *pion.Message, at uint16) netip.AddrPort {
		t.Helper()
		var x pion.XORMappedAddress
		if err := x.GetFromAs(pm, pion.AttrType(at)); err != nil {
			t.Fatalf("pion XOR %#x: %v", at, err)
		}
		a, _ := netip.AddrFromSlice(x.IP)
		return netip.AddrPortFrom(a.Unmap(), uint16(x.Port))
	}

	// Plain Binding success, IPv4 and IPv6.
	for _, ap := range []netip.AddrPort{pub, pub6} {
		pm := f("binding", BindingSuccess, false, func(b *Builder) { b.AddXORAddress(AttrXORMappedAddress, ap) })
		if pm.Type != pion.BindingSuccess || getXOR(pm, AttrXORMappedAddress) != ap {
			t.Fatalf("binding success for %v", ap)
		}
	}
	// Presence success with lifetime and attempts.
	a1 := engine.Handle{UUID: engine.NewUUID()}
	pm := f("presence", BindingSuccess, true,
		func(b *Builder) { b.AddXORAddress(AttrXORMappedAddress, pub) },
		func(b *Builder) { b.AddUint32(AttrLifetime, 19) },
		func(b *Builder) { b.AddAttempt(a1) })
	if v, err := pm.Get(pion.AttrType(AttrAttempt)); err != nil || !bytes.Equal(v, a1.UUID[:]) {
		t.Fatal("pion: RDV-ATTEMPT")
	}
	if v, err := pm.Get(pion.AttrType(AttrLifetime)); err != nil || binary.BigEndian.Uint32(v) != 19 {
		t.Fatal("pion: RDV-LIFETIME")
	}
	// Errors, signed and unsigned, with UNKNOWN-ATTRIBUTES.
	for _, signed := range []bool{false, true} {
		pm = f("error", BindingError, signed, func(b *Builder) { b.AddErrorCode(420, "Unknown") },
			func(b *Builder) { b.AddUnknownAttributes([]uint16{0x0031, 0x7000}) })
		var ec pion.ErrorCodeAttribute
		if err := ec.GetFrom(pm); err != nil || ec.Code != 420 || string(ec.Reason) != "Unknown" {
			t.Fatalf("pion: ERROR-CODE %v %v", ec, err)
		}
		var ua pion.UnknownAttributes
		if err := ua.GetFrom(pm); err != nil || len(ua) != 2 || ua[0] != 0x0031 || ua[1] != 0x7000 {
			t.Fatalf("pion: UNKNOWN-ATTRIBUTES %v %v", ua, err)
		}
	}
	// OFFER and INTRODUCE indications carry USERNAME.
	pu := Username(KindPresence, h)
	pm = f("offer", OfferIndication, true, func(b *Builder) { b.AddUsername(pu[:]) },
		func(b *Builder) { b.AddAttempt(a1) }, func(b *Builder) { b.AddUint32(AttrLifetime, 30) })
	var un pion.Username
	if err := un.GetFrom(pm); err != nil || string(un) != string(pu[:]) || pm.Type.Class != pion.ClassIndication {
		t.Fatalf("pion: offer username %q %v", un, err)
	}
	cu := Username(KindAttemptClient, a1)
	pm = f("introduce", IntroduceIndication, true, func(b *Builder) { b.AddUsername(cu[:]) },
		func(b *Builder) { b.AddXORAddress(AttrXORPeerAddress, pub6) },
		func(b *Builder) { b.AddXORAddress(AttrPeerLocalAddress, pub) })
	if getXOR(pm, AttrXORPeerAddress) != pub6 || getXOR(pm, AttrPeerLocalAddress) != pub {
		t.Fatal("pion: introduce addresses")
	}
}
