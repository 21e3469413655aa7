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
	ten              int32 // tenants slot: the tombstone is on its tenant's list
	client, owner    engine.Subject
	deadline         time.Duration // the attempt's, for ExpiresAt
	prog             engine.AttemptProgress
	hostOut, peerOut engine.PunchOutcome
	end              engine.AttemptEnd
}

// tombstone records attempt slot ai's end; the caller removes the record
// next. Each tenant holds at most the attempts ceiling of tombstones
// (docs/contracts/semantics.md#lifetimes): when its own are that many, its
// own earliest due goes (the head of its list), never another tenant's, so
// one tenant's churn cannot cut another's statuses short. Expiry is the
// schedule's, drained by cleanup: no scan.
func (s *Store) tombstone(ai int32, end engine.AttemptEnd) {
	a := s.attempts.at(ai)
	if t := s.tenants.at(a.tenant); int(t.tombs.n) >= s.lim.MaxAttempts {
		s.removeTomb(t.tombs.head - 1)
	}
	l := s.listings.at(a.listing)
	ti := s.tombs.alloc()
	*s.tombs.at(ti) = tombRec{
		id: a.id, listing: l.id, tenant: s.tenants.at(a.tenant).t, ten: a.tenant,
		client: s.subjects.at(a.client).name, owner: s.subjects.at(l.owner).name,
		deadline: s.attemptExp.deadline(ai), prog: a.progress(),
		hostOut: a.hostOut, peerOut: a.peerOut, end: end,
	}
	dl := s.endedAt(ai, end) + engine.TombstoneTTL
	s.tombExp.push(ti, dl)
	s.tenantTombs(a.tenant, func(l *expiryList) { l.push(ti, dl) })
	s.tombByID.put(a.id.UUID, ti)
}

// tenantTombs runs op on tenant slot ten's list of tombstones, in deadline
// order: its head and tail are the tenant's (tenantRec.tombs), its nodes
// Store.tombByTenant, shared by every tenant as a tombstone is on one
// tenant's list.
func (s *Store) tenantTombs(ten int32, op func(*expiryList)) {
	t := s.tenants.at(ten)
	l := expiryList{nd: s.tombByTenant, head: t.tombs.head, tail: t.tombs.tail, n: t.tombs.n}
	op(&l)
	s.tombByTenant = l.nd
	t.tombs = tombList{head: l.head, tail: l.tail, n: l.n}
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
	ten := s.tombs.at(ti).ten
	s.tombExp.remove(ti)
	s.tenantTombs(ten, func(l *expiryList) { l.remove(ti) })
	s.tombByID.del(s.tombs.at(ti).id.UUID)
	s.tombs.release(ti)
	s.tenantUnref(ten)
}

// clearTombs drops every tombstone (MarkUnavailable: nothing is answered
// any more). O(tombstones).
func (s *Store) clearTombs() {
	for i := s.tombExp.due(maxDuration); i >= 0; i = s.tombExp.due(maxDuration) {
		s.removeTomb(i)
	}
}
