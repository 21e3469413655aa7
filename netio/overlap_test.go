package netio

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
)

// gatedStore holds its first ApplyBatch until release is closed: a commit
// that takes a round trip as long as the test wants.
type gatedStore struct {
	engine.Store
	entered, release chan struct{}
	once             sync.Once
}

func (g *gatedStore) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	return g.Store.ApplyBatch(ctx, ops)
}

// countingConn counts the batches read from its socket.
type countingConn struct {
	batchConn
	reads atomic.Int32
}

func (c *countingConn) ReadBatch(pkts []packet) (int, error) {
	n, err := c.batchConn.ReadBatch(pkts)
	if err == nil {
		c.reads.Add(1)
	}
	return n, err
}

// TestOverlapReadsTheNextBatchWhileCommitting: with Config.Overlap the
// socket's next batch is read while the store still commits the previous
// one, and the answers leave in the order the batches were read.
func TestOverlapReadsTheNextBatchWhileCommitting(t *testing.T) {
	f := &fixture{t: t, clock: engine.NewManualClock(), keys: engine.NewKeyring(testKey), set: metrics.NewSet()}
	st, err := engine.NewMemStore(engine.DefaultLimits(), f.clock, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	g := &gatedStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Overlap: true, Metrics: f.set,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, g, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{batchConn: m.conns[0]}
	m.conns[0] = cc
	f.med, f.addr = m, m.LocalAddrs()[0]
	m.Start()
	released := false
	t.Cleanup(func() {
		if !released {
			close(g.release)
		}
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	v, pc := f.listing()
	p := f.peer()
	refresh := signedReq('p', v.Presence, pc[:], seq(1))
	p.send(refresh)
	select {
	case <-g.entered:
	case <-time.After(waitBound):
		t.Fatal("the refresh was never committed")
	}
	plain := plainBinding(t)
	p.send(plain)
	for deadline := time.Now().Add(waitBound); cc.reads.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the next batch was not read while the previous one was committing")
		}
	}
	close(g.release)
	released = true
	wantSuccess(t, p.expect(txOf(refresh)), pc[:], p.addr())
	wantSuccess(t, p.expect(txOf(plain)), nil, p.addr())
}
