package stun

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	pion "github.com/pion/stun/v3"
	"github.com/rendezvous/rendezvous/engine"
)

func TestRelayIntroduceType(t *testing.T) {
	if RelayIntroduceIndication != 0x02F3 || Method(RelayIntroduceIndication) != MethodRelayIntroduce ||
		Class(RelayIntroduceIndication) != ClassIndication {
		t.Fatalf("RELAY-INTRODUCE type %#x", RelayIntroduceIndication)
	}
	if ComprehensionRequired(AttrRelayedAddress) || ComprehensionRequired(AttrOutcome) {
		t.Fatal("the relay attributes must be comprehension-optional")
	}
}

// An outcome report and a bind with a relayed address round-trip through
// Builder and Parse, for every path and both address families.
func TestRelayAttributesRoundTrip(t *testing.T) {
	key := bytes.Repeat([]byte{3}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	u := Username(KindAttemptHost, h)
	for _, relayed := range []netip.AddrPort{
		netip.MustParseAddrPort("198.51.100.4:49160"),
		netip.MustParseAddrPort("[2001:db8::40]:50000"),
	} {
		for _, path := range []byte{PathDirect, PathRelayed, PathFailed} {
			b := NewBuilder(make([]byte, 0, 600), BindingRequest, testTx)
			b.AddUsername(u[:])
			b.AddXORAddress(AttrRelayedAddress, relayed)
			b.AddOutcome(path, 1<<31+7)
			b.AddIntegritySHA256(key)
			b.AddFingerprint()
			var m Message
			if err := Parse(b.Bytes(), &m); err != nil {
				t.Fatalf("Parse: %v (build: %v)", err, b.Err())
			}
			if len(m.Unknown()) != 0 {
				t.Fatalf("unknown attributes %v", m.Unknown())
			}
			if got, ok := m.XORAddress(AttrRelayedAddress); !ok || got != relayed {
				t.Fatalf("relayed address %v %v, want %v", got, ok, relayed)
			}
			if p, ms, ok := m.Outcome(); !ok || p != path || ms != 1<<31+7 {
				t.Fatalf("outcome %d %d %v", p, ms, ok)
			}
			if !m.CheckIntegrity(key) {
				t.Fatal("integrity")
			}
		}
	}
}

// A malformed RDV-OUTCOME is reported as absent, never as some outcome.
func TestOutcomeMalformed(t *testing.T) {
	for name, v := range map[string][]byte{
		"short":       {PathDirect, 0, 0, 0, 0, 0, 1},
		"long":        {PathDirect, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0},
		"reserved":    {PathDirect, 0, 1, 0, 0, 0, 0, 1},
		"path zero":   {0, 0, 0, 0, 0, 0, 0, 1},
		"path four":   {4, 0, 0, 0, 0, 0, 0, 1},
		"path random": {0xFF, 0, 0, 0, 0, 0, 0, 1},
	} {
		b := NewBuilder(make([]byte, 0, 100), BindingRequest, testTx)
		b.AddBytes(AttrOutcome, v)
		var m Message
		if err := Parse(b.Bytes(), &m); err != nil {
			t.Fatalf("%s: Parse: %v", name, err)
		}
		if p, ms, ok := m.Outcome(); ok {
			t.Fatalf("%s: decoded as path %d, %d ms", name, p, ms)
		}
	}
	var m Message
	b := NewBuilder(make([]byte, 0, 100), BindingRequest, testTx)
	if Parse(b.Bytes(), &m) != nil {
		t.Fatal("parse empty")
	}
	if _, _, ok := m.Outcome(); ok {
		t.Fatal("absent outcome decoded")
	}
	for _, path := range []byte{0, 4} {
		b := NewBuilder(make([]byte, 0, 100), BindingRequest, testTx)
		b.AddOutcome(path, 1)
		if b.Err() != ErrBadValue || b.Bytes() != nil {
			t.Fatalf("AddOutcome(%d): err %v", path, b.Err())
		}
	}
}

// pion/stun, an independent codec, reads RELAY-INTRODUCE and RDV-OUTCOME as
// the contract lays them out.
func TestInteropPionReadsRelayMessages(t *testing.T) {
	key := bytes.Repeat([]byte{0xAB}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	peer := netip.MustParseAddrPort("[2001:db8::9]:61000")
	cu := Username(KindAttemptClient, h)
	raw := build(t, RelayIntroduceIndication, key, true,
		func(b *Builder) { b.AddUsername(cu[:]) },
		func(b *Builder) { b.AddXORAddress(AttrXORPeerAddress, peer) })
	pm := pionDecode(t, raw)
	pionVerify(t, pm, key)
	if pm.Type.Method != pion.Method(0x0F3) || pm.Type.Class != pion.ClassIndication {
		t.Fatalf("pion type %v", pm.Type)
	}
	var x pion.XORMappedAddress
	if err := x.GetFromAs(pm, pion.AttrXORPeerAddress); err != nil {
		t.Fatal(err)
	}
	if a, _ := netip.AddrFromSlice(x.IP); netip.AddrPortFrom(a, uint16(x.Port)) != peer {
		t.Fatalf("pion peer %v", x)
	}

	raw = build(t, BindingRequest, key, true,
		func(b *Builder) { b.AddUsername(cu[:]) },
		func(b *Builder) { b.AddOutcome(PathRelayed, 2500) })
	pm = pionDecode(t, raw)
	v, err := pm.Get(pion.AttrType(AttrOutcome))
	if err != nil || len(v) != 8 || v[0] != 2 || v[1]|v[2]|v[3] != 0 || binary.BigEndian.Uint32(v[4:]) != 2500 {
		t.Fatalf("pion RDV-OUTCOME %x %v", v, err)
	}
}
