package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Sink keeps benchmark results alive.
var Sink int

// benchHosts is how many listings the processor benchmarks refresh.
const benchHosts = 5000

// BenchmarkProcessor measures the per-datagram CPU cost of the mediator
// without sockets: parse, derive the capability, verify integrity, commit
// (one ApplyBatch per 64 datagrams), encode and sign the answer. ns/op is per
// datagram.
func BenchmarkProcessor(b *testing.B) {
	pf := newProcFixture(b)
	src := netip.MustParseAddrPort("203.0.113.10:40000")
	handles := make([]engine.Handle, benchHosts)
	caps := make([]engine.Capability, benchHosts)
	for i := range handles {
		v, pc := pf.listing()
		handles[i], caps[i] = v.Presence, pc
	}
	var round uint64 // refresh sequence numbers only grow, across sub-benchmarks too
	run := func(b *testing.B, next func(i int) []byte, wantOK bool) {
		b.ReportAllocs()
		b.ResetTimer()
		cpu0 := processCPU()
		defer func() { b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op") }()
		n := 0
		for n < b.N {
			k := min(batchSize, b.N-n)
			for j := 0; j < k; j++ {
				d := next(n + j)
				pf.in[j].buf = append(pf.in[j].buf[:0], d...)
				pf.in[j].addr, pf.in[j].trunc = src, false
			}
			out := pf.proc.run(pf.in[:k], int64(n))
			if wantOK && len(out) != k {
				b.Fatalf("%d answers to %d datagrams", len(out), k)
			}
			Sink += len(out)
			n += k
		}
	}
	b.Run("presence", func(b *testing.B) {
		// Every refresh needs a larger sequence number than the last: all
		// b.N datagrams are built before the timer starts.
		all := make([][]byte, b.N)
		for i := range all {
			if i%benchHosts == 0 {
				round++
			}
			h := i % benchHosts
			all[i] = buildInto(make([]byte, 0, 160), 'p', handles[h], &caps[h], round, [12]byte{byte(h), byte(h >> 8)})
		}
		run(b, func(i int) []byte { return all[i] }, true)
	})
	b.Run("plain-binding", func(b *testing.B) {
		pb := stun.NewBuilder(make([]byte, 0, 64), stun.BindingRequest, [12]byte{7})
		plain := pb.Bytes()
		run(b, func(int) []byte { return plain }, true)
	})
	b.Run("forged", func(b *testing.B) {
		bad := caps[0]
		bad[0] ^= 1
		forged := buildInto(make([]byte, 0, 256), 'p', handles[0], &bad, 1, [12]byte{8})
		run(b, func(int) []byte { return forged }, false)
	})
}
