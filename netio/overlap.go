package netio

// overlapLoop serves one socket with two batches in flight (Config.Overlap):
// while a committer goroutine commits batch N (one store.ApplyBatch, a round
// trip to a remote store) and sends its answers, this goroutine reads and
// authenticates batch N+1. Each in-flight batch has its own read buffers and
// processor, handed between the two goroutines over channels, so neither
// touches what the other holds; batches are committed and answered in the
// order they were read. The loop and its hand-offs allocate nothing per
// batch (what the store's commit allocates is the store's: see
// TestApplyBatchAllocatesPerBatchNotPerOp for Redis).
func (m *Mediator) overlapLoop(c batchConn) {
	defer m.wg.Done()
	type slot struct {
		in []packet
		p  *processor
		n  int
	}
	var slots [2]slot
	free, ready := make(chan int, len(slots)), make(chan int, len(slots))
	for k := range slots {
		slots[k] = slot{in: newPackets(batchSize, readSlot), p: m.newProcessor()}
		free <- k
	}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		for k := range ready {
			s := &slots[k]
			m.write(c, s.p, s.p.apply(), s.n)
			free <- k
		}
	}()
	defer func() {
		close(ready)
		<-committed // the batch in flight is committed and answered
	}()
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
		ready <- k
	}
}
