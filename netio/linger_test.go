package netio

import (
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestCommitLingerGathersSmallBatches: with Config.CommitLinger, a
// datagram arriving soon after the previous commit waits, and what arrives
// while it waits is committed with it in one ApplyBatch; the first
// datagram (no commit before it) is committed at once. Every request is
// answered, in order.
func TestCommitLingerGathersSmallBatches(t *testing.T) {
	f := newStoreFixture(t)
	g := &gatedStore{Store: f.store, entered: make(chan struct{}), release: make(chan struct{})}
	close(g.release)
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Overlap: true, CommitLinger: MaxCommitLinger,
		Metrics: f.set, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, g, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	// The test's own sleep holds the waiting batch until the rest is sent,
	// however slow the machine: a lingering batch is not timed here.
	lingered, resume := make(chan time.Duration, 1), make(chan struct{})
	m.sleep = func(d time.Duration) {
		lingered <- d
		<-resume
	}
	f.med, f.addr = m, m.LocalAddrs()[0]
	m.Start()
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	v, pc := f.listing()
	p := f.peer()
	reqs := make([][]byte, 10)
	for i := range reqs {
		reqs[i] = signedReq('p', v.Presence, pc[:], seq(uint64(i+1)))
	}

	p.send(reqs[0])
	wantSuccess(t, p.expect(txOf(reqs[0])), pc[:], p.addr())
	select {
	case d := <-lingered:
		t.Fatalf("the first datagram waited %v: no commit came before it", d)
	default:
	}

	p.send(reqs[1])
	select {
	case d := <-lingered:
		if d <= 0 || d > MaxCommitLinger {
			t.Fatalf("a small batch waited %v, want (0, %v]", d, MaxCommitLinger)
		}
	case <-time.After(waitBound):
		t.Fatal("a datagram right after a commit did not wait for more")
	}
	for _, r := range reqs[2:] {
		p.send(r)
	}
	close(resume)
	for _, r := range reqs[1:] {
		wantSuccess(t, p.expect(txOf(r)), pc[:], p.addr())
	}
	if got := g.batches(); len(got) != 2 || got[0] != 1 || got[1] != 9 {
		t.Fatalf("commits carried %v datagrams, want [1 9]: the ones sent while the second waited join it", got)
	}
}

// TestLingerWaitsOnlyForSmallBatchesSoonAfterACommit: linger sleeps until
// CommitLinger after the previous hand-over, and only for a small batch;
// nothing waits without a linger, after a quiet spell, or for a batch of
// lingerBelow datagrams or more.
func TestLingerWaitsOnlyForSmallBatchesSoonAfterACommit(t *testing.T) {
	m := &Mediator{origin: time.Now()}
	var slept []time.Duration
	m.sleep = func(d time.Duration) { slept = append(slept, d) }
	const linger = 5 * time.Millisecond
	cases := []struct {
		name   string
		linger time.Duration
		n      int
		since  time.Duration // from the previous hand-over to now
		wait   bool
	}{
		{"small, right after a commit", linger, 1, 0, true},
		{"just under the bound", linger, lingerBelow - 1, time.Millisecond, true},
		{"not small", linger, lingerBelow, 0, false},
		{"after a quiet spell", linger, 1, time.Second, false},
		{"no linger", 0, 1, 0, false},
	}
	for _, c := range cases {
		slept = nil
		m.cfg.CommitLinger = c.linger
		m.linger(c.n, m.nanotime()-int64(c.since))
		switch {
		case c.wait && (len(slept) != 1 || slept[0] <= 0 || slept[0] > c.linger-c.since):
			t.Errorf("%s: slept %v, want one wait in (0, %v]", c.name, slept, c.linger-c.since)
		case !c.wait && len(slept) != 0:
			t.Errorf("%s: slept %v, want no wait", c.name, slept)
		}
	}
}
