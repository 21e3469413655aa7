package stun

import (
	"bytes"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Sink keeps benchmark results alive.
var Sink int

// presenceRequest is a presence refresh signed with key.
func presenceRequest(key []byte) []byte {
	u := Username(KindPresence, engine.Handle{UUID: engine.NewUUID()})
	bl := NewBuilder(make([]byte, 0, 600), BindingRequest, testTx)
	bl.AddUsername(u[:])
	bl.AddUint64(AttrSequence, 9)
	bl.AddIntegritySHA256(key)
	bl.AddFingerprint()
	return bl.Bytes()
}

func BenchmarkParseVerify(b *testing.B) {
	key := bytes.Repeat([]byte{1}, 32)
	raw := presenceRequest(key)
	var m Message
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if Parse(raw, &m) != nil || !m.CheckIntegrity(key) {
			b.Fatal("parse")
		}
		Sink++
	}
}

func BenchmarkBuildSigned(b *testing.B) {
	key := bytes.Repeat([]byte{1}, 32)
	buf := make([]byte, 0, 600)
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(buf, BindingSuccess, testTx)
		bl.AddUint32(AttrLifetime, 20)
		bl.AddIntegritySHA256(key)
		bl.AddFingerprint()
		Sink += bl.Len()
	}
}

// BenchmarkParseVerifyPads is BenchmarkParseVerify as the mediator does it:
// the capability's pad states computed per datagram, then the verify.
func BenchmarkParseVerifyPads(b *testing.B) {
	key := bytes.Repeat([]byte{1}, 32)
	raw := presenceRequest(key)
	m := new(Message)
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		h.SetKey(pads, key)
		if Parse(raw, m) != nil || !m.CheckIntegrityWith(h, pads) {
			b.Fatal("parse")
		}
		Sink++
	}
}

// BenchmarkBuildSignedPads is BenchmarkBuildSigned with the pad states the
// verify already computed.
func BenchmarkBuildSignedPads(b *testing.B) {
	key := bytes.Repeat([]byte{1}, 32)
	buf := make([]byte, 0, 600)
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	h.SetKey(pads, key)
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(buf, BindingSuccess, testTx)
		bl.AddUint32(AttrLifetime, 20)
		bl.AddIntegrityWith(h, pads)
		bl.AddFingerprint()
		Sink += bl.Len()
	}
}
