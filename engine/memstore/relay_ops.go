package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// The relay fallback's transitions on the in-memory store: the relay introduction and
// outcome reports (ApplyBatch ops, no allocation), MarkOffered and
// AttemptStatus.

// relayIntroduce consumes attempt slot ai's relay introduction once both
// relayed addresses are recorded (FirstRelay), or reads it back after.
func (s *Store) relayIntroduce(ai int32, op *engine.Op) {
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
	op.RelayIntro = engine.RelayIntroduction{Attempt: a.id, Handle: a.handle, Host: a.hostRelay.addrPort(), Client: a.peerRelay.addrPort()}
}

// reportOutcome records one side's outcome: the first report per side is
// kept, a repeat is Duplicate. It fills Tenant and the attempt's view (the
// answer carries its lifetime, as a bind's). NotFound for an unknown handle
// or a wrong key, as a bind.
func (s *Store) reportOutcome(rep *engine.PunchReport, op *engine.Op, now time.Duration) engine.Result {
	if !s.available.Load() {
		return engine.Result{Outcome: engine.ServiceUnavailable}
	}
	ai, ok := s.attemptByHandle.get(rep.Handle.UUID)
	if !ok {
		return engine.Result{Outcome: engine.NotFound}
	}
	a := s.attempts.at(ai)
	key, out := &a.clientKey, &a.peerOut
	if rep.Role == engine.RoleHost {
		key, out = &a.hostKey, &a.hostOut
	}
	if !key.Equal(&rep.Key) {
		return engine.Result{Outcome: engine.NotFound}
	}
	if out.Reported() {
		op.Duplicate = true
	} else {
		*out = engine.PunchOutcome{Path: rep.Path, ConnectMillis: rep.ConnectMillis}
	}
	op.Tenant = s.tenants.at(a.tenant).t
	op.Attempt = s.attemptView(ai, now)
	return engine.Result{}
}

// MarkOffered records that the host was told of attempt h. Allowed while
// draining (the attempt may still complete). Does not allocate.
func (s *Store) MarkOffered(ctx context.Context, h engine.Handle) (engine.Result, error) {
	ai, locked, res, err := s.beginAttempt(ctx, h)
	if !locked {
		return res, err
	}
	defer s.end()
	a := s.attempts.at(ai)
	if a.offered {
		return engine.Result{Replay: true}, nil
	}
	a.offered = true
	return engine.Result{}, nil
}

// AttemptStatus answers the attempt's status to its client or its listing's
// owner (of q.Tenant), from the live record or its tombstone. Order: input
// -> ServiceUnavailable -> NotFound (unknown, other tenant, other subject).
// Allowed while draining and after the drain window (the tombstones stay).
func (s *Store) AttemptStatus(ctx context.Context, q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error) {
	if err := engine.ValidateGetAttempt(&q); err != nil {
		return engine.AttemptStatus{}, engine.Result{}, err
	}
	_, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return engine.AttemptStatus{}, res, err
	}
	defer s.end()
	ai, ok := s.attemptByID.get(q.Attempt.UUID)
	if q.Attempt.IsZero() {
		ai, ok = s.attemptByHandle.get(q.Handle.UUID)
	}
	if ok {
		a := s.attempts.at(ai)
		l := s.listings.at(a.listing)
		if s.tenants.at(a.tenant).t != q.Tenant ||
			(s.subjects.at(a.client).name != q.Subject && s.subjects.at(l.owner).name != q.Subject) {
			return engine.AttemptStatus{}, engine.Result{Outcome: engine.NotFound}, nil
		}
		p := a.progress()
		st := statusOf(a.id, l.id, s.wall(s.attemptExp.deadline(ai)), p, a.hostOut, a.peerOut)
		st.State, st.Reason = p.Live()
		return st, engine.Result{}, nil
	}
	if ti, ok := s.tombByID.get(q.Attempt.UUID); ok && !q.Attempt.IsZero() {
		t := s.tombs.at(ti)
		if t.tenant != q.Tenant || (t.client != q.Subject && t.owner != q.Subject) {
			return engine.AttemptStatus{}, engine.Result{Outcome: engine.NotFound}, nil
		}
		st := statusOf(t.id, t.listing, s.wall(t.deadline), t.prog, t.hostOut, t.peerOut)
		st.State, st.Reason = t.prog.Ended(t.end)
		return st, engine.Result{}, nil
	}
	return engine.AttemptStatus{}, engine.Result{Outcome: engine.NotFound}, nil
}

// progress is the record's facts, as AttemptProgress.
func (a *attemptRec) progress() engine.AttemptProgress {
	return engine.AttemptProgress{
		RelayOnly: a.relayOnly, Offered: a.offered,
		HostBound: a.host.bound(), ClientBound: a.peer.bound(),
		HostRelayed: a.hostRelay.valid(), ClientRelayed: a.peerRelay.valid(),
		Introduced: a.consumed, Relayed: a.relayConsumed,
	}
}

// statusOf renders a status but for State and Reason.
func statusOf(id engine.AttemptID, listing engine.ListingID, expires time.Time, p engine.AttemptProgress, host, client engine.PunchOutcome) engine.AttemptStatus {
	return engine.AttemptStatus{
		Attempt: id, Listing: listing, RelayOnly: p.RelayOnly, ExpiresAt: expires,
		HostBound: p.HostBound, ClientBound: p.ClientBound,
		HostRelayed: p.HostRelayed, ClientRelayed: p.ClientRelayed,
		HostOutcome: host, ClientOutcome: client,
	}
}
