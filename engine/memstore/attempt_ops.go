package memstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// BindAttemptEndpoint binds one role's endpoint: the first binding per role
// wins; the identical binding again is Success with Replay; a different one
// is ReplayRejected. A relayed address is recorded by the same rule, apart
// from the endpoint (see BindAttempt.Relayed). Order: input ->
// ServiceUnavailable -> NotFound (unknown handle or wrong key for the role).
// Allowed while draining. Does not allocate.
func (s *Store) BindAttemptEndpoint(ctx context.Context, cmd engine.BindAttempt) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateBind(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	now, err := s.begin(ctx)
	if err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	defer s.end()
	ai, r := s.bindAttempt(&cmd)
	if ai < 0 {
		return engine.AttemptView{}, r, nil
	}
	return s.attemptView(ai, now), r, nil
}

// bindAttempt is BindAttemptEndpoint under the commit lock. It returns the
// attempt's slot when the bind succeeded (fresh or replay), else -1.
func (s *Store) bindAttempt(cmd *engine.BindAttempt) (int32, engine.Result) {
	if !s.available.Load() {
		return -1, engine.Result{Outcome: engine.ServiceUnavailable}
	}
	ai, ok := s.attemptByHandle.get(cmd.Handle.UUID)
	if !ok {
		return -1, engine.Result{Outcome: engine.NotFound}
	}
	a := s.attempts.at(ai)
	key, cur, relay := &a.clientKey, &a.peer, &a.peerRelay
	if cmd.Role == engine.RoleHost {
		key, cur, relay = &a.hostKey, &a.host, &a.hostRelay
	}
	if !key.Equal(&cmd.Key) {
		return -1, engine.Result{Outcome: engine.NotFound}
	}
	b := packBinding(cmd.Public, cmd.Local)
	if cur.bound() {
		if *cur != b {
			return -1, engine.Result{Outcome: engine.ReplayRejected}
		}
		if !cmd.Relayed.IsValid() {
			return ai, engine.Result{Replay: true}
		}
		r := packEndpoint(cmd.Relayed)
		switch {
		case !relay.valid():
			*relay = r // the endpoint repeats; the relayed address is new
			return ai, engine.Result{}
		case *relay == r:
			return ai, engine.Result{Replay: true}
		}
		return -1, engine.Result{Outcome: engine.ReplayRejected}
	}
	*cur = b
	relay.set(cmd.Relayed)
	if cmd.Role == engine.RoleHost {
		s.pending.remove(&s.listings.at(a.listing).pending, ai)
	}
	return ai, engine.Result{}
}

// ConsumeIntroduction consumes the introduction once: Success the first time
// both endpoints are bound, ReplayRejected after, Conflict while an endpoint
// is missing and always for a relay-only attempt.
func (s *Store) ConsumeIntroduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	ai, locked, res, err := s.beginAttempt(ctx, h)
	if !locked {
		return engine.Introduction{}, res, err
	}
	defer s.end()
	a := s.attempts.at(ai)
	switch {
	case a.consumed:
		return engine.Introduction{}, engine.Result{Outcome: engine.ReplayRejected}, nil
	case !a.host.bound() || !a.peer.bound() || a.relayOnly:
		return engine.Introduction{}, engine.Result{Outcome: engine.Conflict}, nil
	}
	s.consume(ai)
	return s.introduction(ai), engine.Result{}, nil
}

// consume marks the introduction consumed. An attempt is in flight until
// either introduction is consumed.
func (s *Store) consume(ai int32) {
	a := s.attempts.at(ai)
	if !a.relayConsumed {
		s.inFlight--
	}
	a.consumed = true
}

// Introduction reads back a consumed introduction; Conflict if it has not
// been consumed yet.
func (s *Store) Introduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	ai, locked, res, err := s.beginAttempt(ctx, h)
	if !locked {
		return engine.Introduction{}, res, err
	}
	defer s.end()
	if !s.attempts.at(ai).consumed {
		return engine.Introduction{}, engine.Result{Outcome: engine.Conflict}, nil
	}
	return s.introduction(ai), engine.Result{}, nil
}

// AttemptHost returns the presence handle of the listing attempt h belongs
// to. It holds the commit lock shared (never exclusively) and runs no
// cleanup, so it treats anything past its deadline — the attempt, its
// listing's lease, the drain window — as absent. Does not allocate.
func (s *Store) AttemptHost(h engine.Handle) (engine.Handle, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.available.Load() {
		return engine.Handle{}, false
	}
	now := s.clock.Now()
	if s.draining.Load() && now >= s.drainDeadline {
		return engine.Handle{}, false
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok || s.attemptExp.deadline(ai) <= now {
		return engine.Handle{}, false
	}
	li := s.attempts.at(ai).listing
	if s.leaseExp.deadline(li) <= now {
		return engine.Handle{}, false
	}
	return s.listings.at(li).presence, true
}
