package engine_test

import (
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// macSink keeps benchmark results alive so the compiler cannot drop the work.
var macSink byte

// BenchmarkHMAC compares the allocation-free HMAC-SHA256 from scratch
// (HMACSHA256: four blocks for a short message) with the precomputed pad
// states (HMAC with an HMACKey: two), for the service's shapes.
func BenchmarkHMAC(b *testing.B) {
	k := engine.NewKeyring([32]byte{1})
	h := engine.NewHMAC()
	hd := engine.Handle{UUID: engine.UUID{3}}
	key := make([]byte, 32)
	msg := make([]byte, 76) // a presence refresh up to its integrity attribute
	var mk engine.HMACKey
	h.SetKey(&mk, key)
	f := func(name string, fn func() byte) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				macSink ^= fn()
			}
		})
	}
	f("derive/HMACSHA256", func() byte { c := k.Presence(hd); return c[0] })
	f("derive/pads", func() byte { c := k.PresenceWith(h, hd); return c[0] })
	f("msg76/HMACSHA256", func() byte { s := engine.HMACSHA256(key, msg); return s[0] })
	f("msg76/setkey+pads", func() byte { h.SetKey(&mk, key); s := h.Sum(&mk, msg); return s[0] })
	f("msg76/pads", func() byte { s := h.Sum(&mk, msg); return s[0] })
}
