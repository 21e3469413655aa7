package bench

import (
	"runtime"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// BenchmarkStoreHeap fills a MemStore to its ceilings (at 25,000: the
// defaults, exactly full) with 16 metadata entries and a realistic JSON
// document on every listing, then reports the heap the store holds
// (HeapInuse after GC, minus the heap before the fill) and the cost of a
// full GC at that fill: the stop-the-world pause and the wall time of
// runtime.GC. One iteration is one forced GC. payload-MiB is the heap the
// same specs and documents take on their own, without any store.
//
//	go test -run '^$' -bench StoreHeap -benchtime 20x -count 3 ./bench/
func BenchmarkStoreHeap(b *testing.B) {
	for _, c := range []storeCase{{"mem", 25_000}, {"mem", 250_000}} {
		b.Run(c.name()+"/meta=16", func(b *testing.B) {
			var before, after, ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			f, err := newFixture(c, false, 16)
			if err != nil {
				b.Fatal(err)
			}
			s := f.s
			f = nil // drop the fixture's own bookkeeping: measure the store alone
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / (1 << 20)
			objects := int64(after.HeapObjects) - int64(before.HeapObjects)
			// The same specs and documents held without a store: what the
			// callers hand in, so heap-MiB minus payload-MiB is the store's own cost.
			runtime.GC()
			runtime.ReadMemStats(&before)
			payload := make([]engine.ListingSpec, c.listings)
			docs := make([][]byte, c.listings)
			for i := range payload {
				payload[i] = fillSpec(i, 16)
				docs[i] = fillDoc(&payload[i])
			}
			runtime.GC()
			runtime.ReadMemStats(&ms)
			payloadMiB := float64(int64(ms.HeapInuse)-int64(before.HeapInuse)) / (1 << 20)
			runtime.KeepAlive(payload)
			runtime.KeepAlive(docs)
			payload, docs = nil, nil
			var pause, wall time.Duration
			for b.Loop() {
				t0 := time.Now()
				runtime.GC()
				wall += time.Since(t0)
				runtime.ReadMemStats(&ms)
				pause += time.Duration(ms.PauseNs[(ms.NumGC+255)%256])
			}
			b.ReportMetric(heap, "heap-MiB")
			b.ReportMetric(payloadMiB, "payload-MiB")
			b.ReportMetric(float64(objects), "heap-objects")
			b.ReportMetric(float64(pause.Microseconds())/float64(b.N), "gc-pause-µs")
			b.ReportMetric(float64(wall.Microseconds())/float64(b.N)/1000, "gc-wall-ms")
			runtime.KeepAlive(s)
			_ = f
		})
	}
}
