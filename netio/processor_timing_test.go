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
	// Datagrams are built in rounds outside the timer: every refresh needs
	// a larger sequence number than the last.
	rounds := make([][]byte, benchHosts)
	for i := range rounds {
		rounds[i] = make([]byte, 0, 256)
	}
	var round uint64
	build := func() {
		round++
		for i := range rounds {
			rounds[i] = buildInto(rounds[i][:0], 'p', handles[i], &caps[i], round, [12]byte{byte(i), byte(i >> 8)})
		}
	}
	run := func(b *testing.B, next func(i int) []byte, wantOK bool) {
		b.ReportAllocs()
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
		build()
		pos := 0
		run(b, func(int) []byte {
			if pos == benchHosts {
				b.StopTimer()
				build()
				pos = 0
				b.StartTimer()
			}
			pos++
			return rounds[pos-1]
		}, true)
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
