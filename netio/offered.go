package netio

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// An attempt is "offered" (GET /v1/join-attempts/{id}) once its host was
// told: an OFFER was sent or a presence answer named it. Marking it is a
// store call (a Redis round trip with the shared store), so neither the
// readers nor the OFFER send wait for it: the handles are queued, bounded,
// and the offer goroutine marks them. A full queue drops the mark: the
// state is a diagnosis and the join goes on, and the host's next refresh
// names the attempt again while it is pending.

// markOffered queues h to be marked offered; it never blocks.
func (p *processor) markOffered(h engine.Handle) {
	if p.marks == nil {
		return
	}
	select {
	case p.marks <- h:
	default:
	}
}

// mark records that the host was told of h. An attempt gone since is
// NotFound: nothing to mark.
func (m *Mediator) mark(h engine.Handle) {
	_, _ = m.store.MarkOffered(context.Background(), h)
}
