package engine

import (
	"context"
	"time"
)

// MaxPresenceSeq is the highest presence sequence accepted; a higher one is
// bad input (a signed 400 on the wire) and is never recorded. A listing's
// sequence may only rise, so a recorded value near 2^64 would lock its host
// out for the listing's whole life; with this bound a value a buggy host
// sends (a negative number as unsigned, random bits) is refused instead,
// while a counter from 1 at one refresh a millisecond needs 285,000 years
// to reach it. 2^53-1 is also the largest integer every JSON and JavaScript
// SDK represents exactly, and Unix time in milliseconds or microseconds
// fits.
const MaxPresenceSeq = 1<<53 - 1

// BindHostPresence is the host's heartbeat: an atomic whole-endpoint
// replacement with a new deadline now+PresenceTTL. Order: input (endpoints,
// Seq above MaxPresenceSeq) ->
// ServiceUnavailable -> NotFound (unknown handle or wrong key) -> Conflict
// (Seq 0 or not above the last accepted) -> CapacityExceeded(PoolPresence)
// when presence is not fresh and the pool is full. Accepted while draining.
// A steady-state refresh does not allocate.
func (s *MemStore) BindHostPresence(ctx context.Context, cmd BindPresence) (v PresenceView, r Result, err error) {
	if err := validatePresence(&cmd); err != nil {
		return PresenceView{}, Result{}, err
	}
	now, err := s.begin(ctx)
	if err != nil {
		return PresenceView{}, Result{}, err
	}
	defer s.end()
	r = s.bindPresence(&cmd, now, &v)
	return v, r, nil
}

// bindPresence is BindHostPresence under the commit lock, input validated.
// On success it fills *v (see fillPresenceView); otherwise it leaves *v
// alone, and the caller's zero view stands.
func (s *MemStore) bindPresence(cmd *BindPresence, now time.Duration, v *PresenceView) Result {
	if !s.available.Load() {
		return Result{Outcome: ServiceUnavailable}
	}
	li, ok := s.listingByPresence.get(cmd.Handle.UUID)
	if !ok {
		return Result{Outcome: NotFound}
	}
	if int(li) < len(s.presExp.nd) {
		// Start the schedule node's cache miss before the record's, so
		// they overlap (see touchLease).
		s.warmSink += uint64(s.presExp.nd[li].next)
	}
	if !keyEqual(&s.listings.at(li).presenceKey, &cmd.Key) {
		return Result{Outcome: NotFound}
	}
	l := s.listings.at(li)
	if cmd.Seq == 0 || cmd.Seq <= l.lastSeq {
		return Result{Outcome: Conflict}
	}
	if !l.fresh && s.nPresence >= s.lim.MaxPresence {
		return Result{Outcome: CapacityExceeded, Pool: PoolPresence}
	}
	l.lastSeq = cmd.Seq
	l.pres.set(cmd.Public, cmd.Local)
	if l.fresh {
		s.presExp.refresh(li, now+s.lim.PresenceTTL)
	} else {
		l.fresh = true
		s.nPresence++
		s.presExp.push(li, now+s.lim.PresenceTTL)
		if l.public {
			s.setVisible(li, true)
		}
	}
	s.fillPresenceView(v, li, now)
	return Result{}
}
