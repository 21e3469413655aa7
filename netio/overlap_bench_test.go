package netio

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// roundTripStore adds a fixed wait to every ApplyBatch, as a remote store's
// round trip would, and counts the commits and their ops.
type roundTripStore struct {
	engine.Store
	rtt          time.Duration
	commits, ops atomic.Int64
}

func (s *roundTripStore) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	time.Sleep(s.rtt)
	s.commits.Add(1)
	s.ops.Add(int64(len(ops)))
	return s.Store.ApplyBatch(ctx, ops)
}

// BenchmarkOverlapBatchFill sends presence refreshes at 100,000/s, faster
// than commits of batchSize drain them, to an overlapping mediator whose
// store takes a fixed round trip per commit, and reports how many refreshes
// one commit carried (ops/commit): with a backlog, a batch is bounded by
// overlapBatch (batchSize without the top-up). Below the commit rate, a batch is what
// arrives during one commit cycle, which here depends most on how long the
// sleep standing for the round trip really lasts (on a busy machine, about a
// millisecond), so no slower rate is run. One iteration is one refresh,
// committed (the answers are not read here: the peer's receive buffer may
// drop some on a busy machine).
func BenchmarkOverlapBatchFill(b *testing.B) {
	const (
		rate     = 100_000 // refreshes per second
		rtt      = 200 * time.Microsecond
		listings = 500
	)
	f := &fixture{t: b, clock: engine.NewManualClock(), keys: engine.NewKeyring(testKey), set: metrics.NewSet()}
	st, err := memstore.New(engine.DefaultLimits(), f.clock, f.keys)
	if err != nil {
		b.Fatal(err)
	}
	f.store = st
	rs := &roundTripStore{Store: st, rtt: rtt}
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Overlap: true, Metrics: f.set,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, rs, f.keys)
	if err != nil {
		b.Fatal(err)
	}
	f.med, f.addr = m, m.LocalAddrs()[0]
	m.Start()
	b.Cleanup(func() { m.Close() })
	views := make([]engine.ListingView, listings)
	keys := make([]engine.Capability, listings)
	for i := range views {
		views[i], keys[i] = f.listing()
	}
	reqs := make([][]byte, b.N)
	for i := range reqs {
		k := i % listings
		reqs[i] = signedReq('p', views[k].Presence, keys[k][:], seq(uint64(i/listings+1)))
	}
	p := f.peer()
	rs.commits.Store(0)
	rs.ops.Store(0)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; {
		due := min(b.N, int(time.Since(start).Seconds()*rate)+1)
		for ; i < due; i++ {
			if _, err := p.conn.WriteToUDPAddrPort(reqs[i], f.addr); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(20 * time.Microsecond)
	}
	for deadline := time.Now().Add(waitBound); rs.ops.Load() < int64(b.N); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d refreshes committed", rs.ops.Load(), b.N)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(rs.ops.Load())/float64(rs.commits.Load()), "ops/commit")
}
