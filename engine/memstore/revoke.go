package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// RevokeListing removes one listing with its presence and attempts.
// NotFound if it is missing or another tenant's (unless AnyTenant).
func (s *Store) RevokeListing(ctx context.Context, cmd engine.RevokeListing) (engine.Result, error) {
	if !cmd.AnyTenant {
		if err := cmd.Tenant.Validate(); err != nil {
			return engine.Result{}, err
		}
	}
	_, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return res, err
	}
	defer s.end()
	li, ok := s.listingByID.get(cmd.Listing.UUID)
	if !ok || (!cmd.AnyTenant && s.tenants.at(s.listings.at(li).tenant).t != cmd.Tenant) {
		return engine.Result{Outcome: engine.NotFound}, nil
	}
	s.removeListing(li, engine.EndRevoked)
	return engine.Result{}, nil
}

// RevokePrincipal inserts (or re-times) a revocation of subject, then removes
// every listing it owns and every attempt it created, through its
// per-subject lists. removed counts them as the reference does: the owned
// listings plus the created attempts, both counted before removal. If the
// revocation pool is full (and subject is not revoked already) nothing
// changes. Like every transition, ServiceUnavailable (and no change) once
// the store is unavailable (Store.MarkUnavailable: fail closed).
func (s *Store) RevokePrincipal(ctx context.Context, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	if err := engine.ValidateRevocation(subject, ttl); err != nil {
		return 0, engine.Result{}, err
	}
	sk := s.subjectKey(subject)
	now, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return 0, res, err
	}
	defer s.end()
	si := s.findSubject(sk)
	if (si < 0 || !s.revocations.has(si)) && s.nRevocations() >= s.lim.MaxRevocations {
		return 0, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolRevocations}, nil
	}
	if si < 0 {
		si = s.subjectSlot(sk)
	}
	s.revocations.set(si, now+ttl)
	return s.removeSubjectRecords(sk, -1), engine.Result{}, nil
}

// removeSubjectRecords removes the listings subject owns and the attempts
// it created, in tenant slot ti or in every tenant (ti < 0), and returns
// how many it counted before removing any: an attempt it created on one of
// its own listings counts too, though it goes with the listing.
func (s *Store) removeSubjectRecords(sk subjectKey, ti int32) int {
	si := s.findSubject(sk)
	if si < 0 {
		return 0
	}
	in := func(t int32) bool { return ti < 0 || t == ti }
	removed := 0
	sr := s.subjects.at(si)
	for li := s.byOwner.first(&sr.listings); li >= 0; li = s.byOwner.next(li) {
		if in(s.listings.at(li).tenant) {
			removed++
		}
	}
	for ai := s.byClnt.first(&sr.attempts); ai >= 0; ai = s.byClnt.next(ai) {
		if in(s.attempts.at(ai).tenant) {
			removed++
		}
	}
	// Removing a record frees the subject (and the tenant record) only when
	// it was the last naming it; then there is no next one to visit, and no
	// slot is reused while this runs (nothing is allocated).
	for li := s.byOwner.first(&s.subjects.at(si).listings); li >= 0; {
		next := s.byOwner.next(li)
		if in(s.listings.at(li).tenant) {
			s.removeListing(li, engine.EndRevoked)
		}
		li = next
	}
	if si = s.findSubject(sk); si < 0 {
		return removed
	}
	for ai := s.byClnt.first(&s.subjects.at(si).attempts); ai >= 0; {
		next := s.byClnt.next(ai)
		if in(s.attempts.at(ai).tenant) {
			s.removeAttempt(ai, engine.EndRevoked)
		}
		ai = next
	}
	return removed
}

// Revoked reports whether subject has a live global revocation.
func (s *Store) Revoked(ctx context.Context, subject engine.Subject) (bool, error) {
	if err := subject.Validate(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	sk := s.subjectKey(subject)
	// Every authenticated HTTP request asks this, so it is a read under the
	// shared lock, not a transition: a revocation past its deadline that
	// cleanup has not removed yet counts as absent.
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.revokedAt(sk, s.clock.Now()), nil
}
