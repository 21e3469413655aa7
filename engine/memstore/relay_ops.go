package engine

import (
	"context"
	"time"
)

// The relay fallback's transitions on MemStore: the relay introduction and
// outcome reports (ApplyBatch ops, no allocation), MarkOffered and
// AttemptStatus.

// relayIntroduce consumes attempt slot ai's relay introduction once both
// relayed addresses are recorded (FirstRelay), or reads it back after.
func (s *MemStore) relayIntroduce(ai int32, op *Op) {
	a := s.attempts.at(ai)
	if !a.hostRelay.valid() || !a.peerRelay.valid() {
		return
	}
	op.RelayReady = true
	if !a.relayConsumed {
		if !a.consumed {
			s.inFlight--
		}
		a.relayConsumed = true
		op.FirstRelay = true
	}
	op.RelayIntro = RelayIntroduction{Attempt: a.id, Handle: a.handle, Host: a.hostRelay.addrPort(), Client: a.peerRelay.addrPort()}
}

func validateReport(r *PunchReport) error {
	if r.Role != RoleHost && r.Role != RoleClient {
		return errRole
	}
	if r.Path == 0 || r.Path >= numPaths {
		return errPath
	}
	return nil
}

// reportOutcome records one side's outcome: the first report per side is
// kept, a repeat is Duplicate. It fills Tenant and the attempt's view (the
// answer carries its lifetime, as a bind's). NotFound for an unknown handle
// or a wrong key, as a bind.
func (s *MemStore) reportOutcome(rep *PunchReport, op *Op, now time.Duration) Result {
	if !s.available.Load() {
		return Result{Outcome: ServiceUnavailable}
	}
	ai, ok := s.attemptByHandle.get(rep.Handle.UUID)
	if !ok {
		return Result{Outcome: NotFound}
	}
	a := s.attempts.at(ai)
	key, out := &a.clientKey, &a.peerOut
	if rep.Role == RoleHost {
		key, out = &a.hostKey, &a.hostOut
	}
	if !keyEqual(key, &rep.Key) {
		return Result{Outcome: NotFound}
	}
	if out.Reported() {
		op.Duplicate = true
	} else {
		*out = PunchOutcome{Path: rep.Path, ConnectMillis: rep.ConnectMillis}
	}
	op.Tenant = s.tenants.at(a.tenant).t
	op.Attempt = s.attemptView(ai, now)
	return Result{}
}

// MarkOffered records that the host was told of attempt h. Allowed while
// draining (the attempt may still complete). Does not allocate.
func (s *MemStore) MarkOffered(ctx context.Context, h Handle) (Result, error) {
	if _, err := s.begin(ctx); err != nil {
		return Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return Result{Outcome: ServiceUnavailable}, nil
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok {
		return Result{Outcome: NotFound}, nil
	}
	a := s.attempts.at(ai)
	if a.offered {
		return Result{Replay: true}, nil
	}
	a.offered = true
	return Result{}, nil
}

// ValidateGetAttempt checks a status query's tenant and subject.
func ValidateGetAttempt(q *GetAttempt) error {
	if err := q.Tenant.Validate(); err != nil {
		return err
	}
	return q.Subject.Validate()
}

// AttemptStatus answers the attempt's status to its client or its listing's
// owner (of q.Tenant), from the live record or its tombstone. Order: input
// -> ServiceUnavailable -> NotFound (unknown, other tenant, other subject).
// Allowed while draining and after the drain window (the tombstones stay).
func (s *MemStore) AttemptStatus(ctx context.Context, q GetAttempt) (AttemptStatus, Result, error) {
	if err := ValidateGetAttempt(&q); err != nil {
		return AttemptStatus{}, Result{}, err
	}
	if _, err := s.begin(ctx); err != nil {
		return AttemptStatus{}, Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return AttemptStatus{}, Result{Outcome: ServiceUnavailable}, nil
	}
	ai, ok := s.attemptByID.get(q.Attempt.UUID)
	if q.Attempt.IsZero() {
		ai, ok = s.attemptByHandle.get(q.Handle.UUID)
	}
	if ok {
		a := s.attempts.at(ai)
		l := s.listings.at(a.listing)
		if s.tenants.at(a.tenant).t != q.Tenant ||
			(s.subjects.at(a.client).name != q.Subject && s.subjects.at(l.owner).name != q.Subject) {
			return AttemptStatus{}, Result{Outcome: NotFound}, nil
		}
		p := a.progress()
		st := statusOf(a.id, l.id, s.wall(s.attemptExp.deadline(ai)), p, a.hostOut, a.peerOut)
		st.State, st.Reason = p.Live()
		return st, Result{}, nil
	}
	if ti, ok := s.tombByID.get(q.Attempt.UUID); ok && !q.Attempt.IsZero() {
		t := s.tombs.at(ti)
		if t.tenant != q.Tenant || (t.client != q.Subject && t.owner != q.Subject) {
			return AttemptStatus{}, Result{Outcome: NotFound}, nil
		}
		st := statusOf(t.id, t.listing, s.wall(t.deadline), t.prog, t.hostOut, t.peerOut)
		st.State, st.Reason = t.prog.Ended(t.end)
		return st, Result{}, nil
	}
	return AttemptStatus{}, Result{Outcome: NotFound}, nil
}

// progress is the record's facts, as AttemptProgress.
func (a *attemptRec) progress() AttemptProgress {
	return AttemptProgress{
		RelayOnly: a.relayOnly, Offered: a.offered,
		HostBound: a.host.bound(), ClientBound: a.peer.bound(),
		HostRelayed: a.hostRelay.valid(), ClientRelayed: a.peerRelay.valid(),
		Introduced: a.consumed, Relayed: a.relayConsumed,
	}
}

// statusOf renders a status but for State and Reason.
func statusOf(id AttemptID, listing ListingID, expires time.Time, p AttemptProgress, host, client PunchOutcome) AttemptStatus {
	return AttemptStatus{
		Attempt: id, Listing: listing, RelayOnly: p.RelayOnly, ExpiresAt: expires,
		HostBound: p.HostBound, ClientBound: p.ClientBound,
		HostRelayed: p.HostRelayed, ClientRelayed: p.ClientRelayed,
		HostOutcome: host, ClientOutcome: client,
	}
}
