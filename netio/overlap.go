package netio

// overlapLoop serves one socket with two batches in flight (Config.Overlap):
// while a committer goroutine commits batch N (one store.ApplyBatch, a round
// trip to a remote store) and sends its answers, this goroutine reads and
// authenticates batch N+1. Each in-flight batch has its own read buffers and
// processor, handed between the two goroutines over channels, so neither
// touches what the other holds; batches are committed and answered in the
// order they were read.
//
// Batch N+1 is read as soon as N is handed over, so it holds only what
// arrived meanwhile; what arrives during N's commit queues in the socket.
// Handing N+1 over at once would leave that queue to batch N+2, and a store
// whose cost is per round trip (Redis: one FCALL per batch) would commit
// many small batches. So N+1 is held until the committer is done with N's
// commit (a blocking receive on applied, sent as ApplyBatch returns, before
// N's answers are sent), then topped up with one non-blocking read of what
// queued, up to batchSize, and those datagrams are authenticated onto it
// (prepareMore) while N's answers go out. The first part stays authenticated
// during N's commit; only the top-up's share is not. A batch therefore
// carries what arrived during one whole commit, and the commit rate follows
// the store's round trip rather than the arrival rate. A batch the blocking
// read filled has nothing to gain and is handed over at once, as before:
// when the socket is never empty, the committer need not wait for the
// reader to wake.
//
// The loop and its hand-offs allocate nothing per batch (what the store's
// commit allocates is the store's: see
// TestApplyBatchAllocatesPerBatchNotPerOp for Redis).
func (m *Mediator) overlapLoop(c batchConn) {
	defer m.wg.Done()
	var slots [2]overlapSlot
	free, ready := make(chan int, len(slots)), make(chan int, len(slots))
	for k := range slots {
		slots[k] = overlapSlot{in: newPackets(batchSize, readSlot), p: m.newProcessor()}
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
	owed := 0 // batches handed over whose token the reader has not taken
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
		if n < len(s.in) {
			for ; owed > 0; owed-- {
				<-applied
			}
			m.topUp(c, s)
		}
		ready <- k
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

// overlapSlot is one batch of overlapLoop: its read buffers, the processor
// preparing and committing it, and how many datagrams it holds.
type overlapSlot struct {
	in []packet
	p  *processor
	n  int
}

// topUp adds to s's prepared batch the datagrams already queued on c, up to
// batchSize, without waiting. A failed read adds nothing; on a closed
// socket the next blocking read fails too and ends the loop.
func (m *Mediator) topUp(c batchConn, s *overlapSlot) {
	if s.n == len(s.in) {
		return
	}
	n, err := c.TryReadBatch(s.in[s.n:])
	if err != nil || n == 0 {
		return
	}
	s.p.prepareMore(s.in[s.n:s.n+n], m.nanotime())
	s.n += n
}
