package netio

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// gatedStore holds its first ApplyBatch until release is closed: a commit
// that takes a round trip as long as the test wants. It records how many
// ops each ApplyBatch carried.
type gatedStore struct {
	engine.Store
	entered, release chan struct{}
	once             sync.Once
	mu               sync.Mutex
	sizes            []int
}

func (g *gatedStore) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	g.once.Do(func() {
		close(g.entered)
		<-g.release
	})
	g.mu.Lock()
	g.sizes = append(g.sizes, len(ops))
	g.mu.Unlock()
	return g.Store.ApplyBatch(ctx, ops)
}

// batches returns the op count of every ApplyBatch so far, in order.
func (g *gatedStore) batches() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.sizes...)
}

// awaitEntered waits until the first ApplyBatch is held.
func (g *gatedStore) awaitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(waitBound):
		t.Fatal("nothing was committed")
	}
}

// countingConn counts the batches read from its socket (blocking reads)
// and the non-blocking reads that found datagrams, holds the second
// blocking read until secondRead is closed (when not nil), and closes closed
// when the mediator closes it.
type countingConn struct {
	batchConn
	reads, tries atomic.Int32
	secondRead   chan struct{}
	closed       chan struct{}
}

func (c *countingConn) ReadBatch(pkts []packet) (int, error) {
	if c.secondRead != nil && c.reads.Load() == 1 {
		<-c.secondRead
	}
	n, err := c.batchConn.ReadBatch(pkts)
	if err == nil {
		c.reads.Add(1)
	}
	return n, err
}

func (c *countingConn) TryReadBatch(pkts []packet) (int, error) {
	n, err := c.batchConn.TryReadBatch(pkts)
	if n > 0 {
		c.tries.Add(1)
	}
	return n, err
}

func (c *countingConn) Close() error {
	err := c.batchConn.Close()
	close(c.closed)
	return err
}

// awaitReads waits until n batches were read.
func (c *countingConn) awaitReads(t *testing.T, n int32) {
	t.Helper()
	for deadline := time.Now().Add(waitBound); c.reads.Load() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("batch %d was not read while the previous one was committing", n)
		}
	}
}

// overlapFixture is a fixture whose mediator (Config.Overlap, one socket)
// commits through a gatedStore over its MemStore, reading through a
// countingConn (holding its second read if holdSecondRead). Cleanup lets
// both go on, then closes the mediator.
type overlapFixture struct {
	*fixture
	gate *gatedStore
	conn *countingConn
}

func newOverlapFixture(t *testing.T, portable, holdSecondRead bool) *overlapFixture {
	t.Helper()
	f := newStoreFixture(t)
	g := &gatedStore{Store: f.store, entered: make(chan struct{}), release: make(chan struct{})}
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Overlap: true, Portable: portable,
		Metrics: f.set, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, g, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{batchConn: m.conns[0], closed: make(chan struct{})}
	if holdSecondRead {
		cc.secondRead = make(chan struct{})
	}
	m.conns[0] = cc
	f.med, f.addr = m, m.LocalAddrs()[0]
	m.Start()
	of := &overlapFixture{fixture: f, gate: g, conn: cc}
	t.Cleanup(func() {
		of.release()
		of.allowSecondRead()
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return of
}

// release lets the held ApplyBatch go on (once).
func (of *overlapFixture) release() {
	select {
	case <-of.gate.release:
	default:
		close(of.gate.release)
	}
}

// allowSecondRead lets a held second read go on (once).
func (of *overlapFixture) allowSecondRead() {
	if of.conn.secondRead == nil {
		return
	}
	select {
	case <-of.conn.secondRead:
	default:
		close(of.conn.secondRead)
	}
}

// TestOverlapReadsTheNextBatchWhileCommitting: with Config.Overlap the
// socket's next batch is read while the store still commits the previous
// one, and the answers leave in the order the batches were read.
func TestOverlapReadsTheNextBatchWhileCommitting(t *testing.T) {
	f := newOverlapFixture(t, false, false)
	v, pc := f.listing()
	p := f.peer()
	refresh := signedReq('p', v.Presence, pc[:], seq(1))
	p.send(refresh)
	f.gate.awaitEntered(t)
	plain := plainBinding(t)
	p.send(plain)
	f.conn.awaitReads(t, 2)
	f.release()
	wantSuccess(t, p.expect(txOf(refresh)), pc[:], p.addr())
	wantSuccess(t, p.expect(txOf(plain)), nil, p.addr())
}

// TestOverlapLoopZeroAllocs: a datagram through the overlap loop (read,
// hand-offs, top-up attempt, commit, answer) allocates nothing.
func TestOverlapLoopZeroAllocs(t *testing.T) {
	f := newOverlapFixture(t, false, false)
	f.release()
	p := f.peer()
	msg := plainBinding(t)
	buf := make([]byte, 256)
	p.conn.SetReadDeadline(time.Now().Add(waitBound))
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := p.conn.WriteToUDPAddrPort(msg, f.addr); err != nil {
			t.Fatal(err)
		}
		if _, _, err := p.conn.ReadFromUDPAddrPort(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("overlap loop: %v allocations per datagram", allocs)
	}
}
