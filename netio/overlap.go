package netio

import (
	"math"
	"time"
)

// overlapLoop serves one socket with two batches in flight (Config.Overlap):
// while a committer goroutine commits batch N (one store.ApplyBatch, a round
// trip to a remote store) and sends its answers, this goroutine reads and
// authenticates batch N+1. Each in-flight batch has its own read buffers and
// processor, handed between the two goroutines over channels, so neither
// touches what the other holds; batches are committed and answered in the
// order they were read.
//
// Batch N+1 is read as soon as N is handed over, so that blocking read
// holds only what arrived meanwhile; what arrives during N's commit queues
// in the socket. N+1 is therefore held until the committer is done with N's
// commit (a blocking receive on applied, sent as ApplyBatch returns, before
// N's answers are sent), then topped up with non-blocking reads of what
// queued, and those datagrams are authenticated onto it (prepareMore) while
// N's answers go out: a batch carries everything that arrived up to the
// moment the store can take it, and what arrived during N's commit is
// committed right after N rather than a commit later. When the blocking read
// filled (datagrams queue faster than commits), the queue is taken at once
// too, before the wait, so that share is authenticated during N's commit.
// A batch holds up to overlapBatch datagrams, two reads' worth: on a store
// whose cost is per call (Redis: one FCALL per batch), a backlog is
// committed in fewer, larger calls. A full batch is handed over at once, as
// the committer need not then wait for the reader to wake. No read blocks
// while the reader holds a batch (it would hold the batch until a datagram
// came), and no read repeats on an empty queue. With Config.CommitLinger, a
// small batch also waits (linger) until that long after the previous
// hand-over before its top-up, so that at moderate rates datagrams share
// commits instead of taking one each.
//
// The loop and its hand-offs allocate nothing per batch (what the store's
// commit allocates is the store's: see
// TestApplyBatchAllocatesPerBatchNotPerOp for Redis).
func (m *Mediator) overlapLoop(c batchConn) {
	defer m.wg.Done()
	var slots [2]overlapSlot
	free, ready := make(chan int, len(slots)), make(chan int, len(slots))
	for k := range slots {
		slots[k] = overlapSlot{in: newPackets(overlapBatch, readSlot), p: m.newProcessor(overlapBatch)}
		free <- k
	}
	// applied gets one token per batch whose ApplyBatch returned. The reader
	// takes every token already sent after each hand-over, and at most
	// len(slots) batches are in flight, so the committer never waits to
	// send one.
	applied := make(chan struct{}, len(slots))
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		for k := range ready {
			s := &slots[k]
			out := s.p.apply()
			applied <- struct{}{}
			m.write(c, s.p, out, s.n)
			free <- k
		}
	}()
	defer func() {
		close(ready)
		<-committed // the batches in flight are committed and answered
	}()
	owed := 0                        // batches handed over whose token the reader has not taken
	last := int64(math.MinInt64 / 2) // the previous hand-over (nanotime)
	for {
		k := <-free
		s := &slots[k]
		n, err := c.ReadBatch(s.in)
		if err != nil {
			free <- k
			if m.closed.Load() || isClosed(err) {
				return
			}
			m.log.Warn("udp read failed", "addr", c.LocalAddr(), "err", err)
			sleepOnReadError()
			continue
		}
		s.n = n
		s.p.prepare(s.in[:n], m.nanotime())
		if n == batchSize {
			m.topUp(c, s) // the read filled: more is queued
		}
		if s.n < len(s.in) {
			for ; owed > 0; owed-- {
				<-applied
			}
			m.linger(s.n, last)
			m.topUp(c, s)
		}
		ready <- k
		last = m.nanotime()
		owed++
	taken:
		for owed > 0 {
			select {
			case <-applied:
				owed--
			default:
				break taken
			}
		}
	}
}

// lingerBelow: a batch with fewer datagrams is small (Config.CommitLinger).
const lingerBelow = batchSize / 4

// linger holds a small batch of n datagrams until Config.CommitLinger after
// the previous hand-over (last), so that what arrives meanwhile, queued on
// the socket, tops it up: at moderate rates a round-trip store then takes
// a few larger commits instead of one per datagram. After a quiet spell the
// deadline has passed and nothing waits.
func (m *Mediator) linger(n int, last int64) {
	if m.cfg.CommitLinger == 0 || n >= lingerBelow {
		return
	}
	if wait := last + int64(m.cfg.CommitLinger) - m.nanotime(); wait > 0 {
		m.sleep(time.Duration(wait))
	}
}

// overlapSlot is one batch of overlapLoop: its read buffers, the processor
// preparing and committing it, and how many datagrams it holds.
type overlapSlot struct {
	in []packet
	p  *processor
	n  int
}

// topUp adds to s's prepared batch the datagrams already queued on c, up to
// its capacity, without waiting: non-blocking reads until one finds the
// queue drained (returns fewer than it asked for) or the batch is full. A
// failed read adds nothing; on a closed socket the next blocking read fails
// too and ends the loop.
func (m *Mediator) topUp(c batchConn, s *overlapSlot) {
	for s.n < len(s.in) {
		want := min(len(s.in)-s.n, batchSize)
		n, err := c.TryReadBatch(s.in[s.n : s.n+want])
		if err != nil || n == 0 {
			return
		}
		s.p.prepareMore(s.in[s.n:s.n+n], m.nanotime())
		s.n += n
		if n < want {
			return
		}
	}
}
