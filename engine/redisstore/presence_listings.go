package redisstore

import (
	"sync"

	"github.com/rendezvous/rendezvous/engine"
)

// presenceListings remembers which listing each presence handle belongs to,
// learnt from accepted refreshes, so a refresh names the listing and the
// function skips its lookup in ph. The mapping never changes (a handle is
// derived from its listing's ID, and IDs are never reused); a listing
// deleted since is simply missing in Redis and the refresh is NotFound, as
// without the entry. Bounded: full, it starts again empty.
type presenceListings struct {
	mu  sync.RWMutex
	m   map[engine.UUID]engine.ListingID
	max int
}

func newPresenceListings(max int) *presenceListings {
	return &presenceListings{m: make(map[engine.UUID]engine.ListingID), max: max}
}

// learn records what the accepted presence ops of a batch answered, for
// those sent without their listing.
func (p *presenceListings) learn(ops []engine.Op, sent []int, known []bool) {
	var locked bool
	for j, i := range sent {
		op := &ops[i]
		if known[j] || op.Kind != engine.OpPresence || !op.Result.OK() {
			continue
		}
		if !locked {
			p.mu.Lock()
			defer p.mu.Unlock()
			locked = true
		}
		if len(p.m) >= p.max {
			clear(p.m)
		}
		p.m[op.Presence.Handle.UUID] = op.PresenceView.Listing
	}
}
