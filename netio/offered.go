package netio

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// An attempt is "offered" (GET /v1/join-attempts/{id}) once its host was
// told: an OFFER was sent or a presence answer named it. Marking it is a
// store call (a Redis round trip with the shared store), so neither the
// readers nor the OFFER sender wait for it: the handles are queued, bounded,
// and a goroutine of their own marks them. A full queue drops the mark: the
// state is a diagnosis and the join goes on, and the host's next refresh
// names the attempt again while it is pending.

// queueMark queues h to be marked offered; it never blocks. A nil queue
// marks nothing.
func queueMark(marks chan<- engine.Handle, h engine.Handle) {
	if marks == nil {
		return
	}
	select {
	case marks <- h:
	default:
	}
}

// markLoop marks the queued attempts offered until Close. An attempt gone
// since is NotFound: nothing to mark.
func (m *Mediator) markLoop() {
	defer m.wg.Done()
	for {
		select {
		case <-m.done:
			return
		case h := <-m.marks:
			_, _ = m.store.MarkOffered(context.Background(), h)
		}
	}
}
