package memstore

import (
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// tombRec is an ended attempt's status, kept TombstoneTTL after its record
// went so GET /v1/join-attempts/{id} can still say how it ended. It keeps
// what the status answer and its authorisation need (the tenant and both
// subjects' names share the strings of the records they came from, so
// making one does not allocate) and none of the peers' addresses or keys.
type tombRec struct {
	id               engine.AttemptID
	listing          engine.ListingID
	tenant           engine.Tenant
	client, owner    engine.Subject
	deadline         time.Duration // the attempt's, for ExpiresAt
	prog             engine.AttemptProgress
	hostOut, peerOut engine.PunchOutcome
	end              engine.AttemptEnd
}

// tombstone records attempt slot ai's end; the caller removes the record
// next. The pool is bounded by the attempts ceiling: when full, the oldest
// tombstone goes (the schedule's head, as every tombstone lives
// TombstoneTTL). Expiry is the schedule's, drained by cleanup: no scan.
func (s *Store) tombstone(ai int32, end engine.AttemptEnd) {
	if s.tombs.n >= s.lim.MaxAttempts {
		s.removeTomb(s.tombExp.head - 1)
	}
	a := s.attempts.at(ai)
	l := s.listings.at(a.listing)
	ti := s.tombs.alloc()
	*s.tombs.at(ti) = tombRec{
		id: a.id, listing: l.id, tenant: s.tenants.at(a.tenant).t,
		client: s.subjects.at(a.client).name, owner: s.subjects.at(l.owner).name,
		deadline: s.attemptExp.deadline(ai), prog: a.progress(),
		hostOut: a.hostOut, peerOut: a.peerOut, end: end,
	}
	s.tombExp.push(ti, s.endedAt(ai, end)+engine.TombstoneTTL)
	s.tombByID.put(a.id.UUID, ti)
}

// endedAt is when attempt slot ai ended: its own deadline, its listing's
// lease deadline or the drain deadline when one of those ended it, else
// now. So a tombstone lives TombstoneTTL from the end, whenever cleanup
// found it.
func (s *Store) endedAt(ai int32, end engine.AttemptEnd) time.Duration {
	switch end {
	case engine.EndExpired:
		return s.attemptExp.deadline(ai)
	case engine.EndLeaseExpired:
		return s.leaseExp.deadline(s.attempts.at(ai).listing)
	case engine.EndDrained:
		if s.draining.Load() {
			return s.drainDeadline
		}
	}
	return s.clock.Now()
}

func (s *Store) removeTomb(ti int32) {
	s.tombExp.remove(ti)
	s.tombByID.del(s.tombs.at(ti).id.UUID)
	s.tombs.release(ti)
}

// clearTombs drops every tombstone (MarkUnavailable: nothing is answered
// any more). O(tombstones).
func (s *Store) clearTombs() {
	for i := s.tombExp.due(maxDuration); i >= 0; i = s.tombExp.due(maxDuration) {
		s.removeTomb(i)
	}
}
