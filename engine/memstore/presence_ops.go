package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// BindHostPresence is the host's heartbeat: an atomic whole-endpoint
// replacement with a new deadline now+PresenceTTL. Order: input (endpoints,
// Seq above MaxPresenceSeq) ->
// ServiceUnavailable -> NotFound (unknown handle or wrong key) -> Conflict
// (Seq 0 or not above the last accepted) -> CapacityExceeded(PoolPresence)
// when presence is not fresh and the pool is full. Accepted while draining.
// A steady-state refresh does not allocate.
func (s *Store) BindHostPresence(ctx context.Context, cmd engine.BindPresence) (v engine.PresenceView, r engine.Result, err error) {
	if err := engine.ValidatePresence(&cmd); err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	now, err := s.begin(ctx)
	if err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	defer s.end()
	r = s.bindPresence(&cmd, now, &v)
	return v, r, nil
}

// bindPresence is BindHostPresence under the commit lock, input validated.
// On success it fills *v (see fillPresenceView); otherwise it leaves *v
// alone, and the caller's zero view stands.
func (s *Store) bindPresence(cmd *engine.BindPresence, now time.Duration, v *engine.PresenceView) engine.Result {
	if !s.available.Load() {
		return engine.Result{Outcome: engine.ServiceUnavailable}
	}
	li, ok := s.listingByPresence.get(cmd.Handle.UUID)
	if !ok {
		return engine.Result{Outcome: engine.NotFound}
	}
	if int(li) < len(s.presExp.nd) {
		// Start the schedule node's cache miss before the record's, so
		// they overlap (see touchLease).
		s.warmSink += uint64(s.presExp.nd[li].next)
	}
	if !s.listings.at(li).presenceKey.Equal(&cmd.Key) {
		return engine.Result{Outcome: engine.NotFound}
	}
	l := s.listings.at(li)
	if cmd.Seq == 0 || cmd.Seq <= l.lastSeq {
		return engine.Result{Outcome: engine.Conflict}
	}
	if !l.fresh && s.nPresence >= s.lim.MaxPresence {
		return engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolPresence}
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
	return engine.Result{}
}
