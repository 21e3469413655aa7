package main

import (
	"testing"
	"time"
)

// Sink keeps benchmark results alive so the compiler cannot drop the work.
var Sink uint64

func BenchmarkRecorderObserve(b *testing.B) {
	var rec Recorder
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		d := time.Duration(0)
		for pb.Next() {
			d += 997
			rec.Observe(KindPresence, CodeOK, d%(50*time.Millisecond))
		}
	})
	var c Counts
	rec.Load(&c)
	Sink += c.Total(KindPresence)
}

func BenchmarkPresenceEncode(b *testing.B) {
	req := testRequest()
	buf := make([]byte, 0, udpMaxReq)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		req.Sequence++
		buf = req.Encode(buf[:0])
	}
	Sink += uint64(len(buf))
}
