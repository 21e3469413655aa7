package engine

import "context"

// BindAttemptEndpoint binds one role's endpoint: the first binding per role
// wins; the identical binding again is Success with Replay; a different one
// is ReplayRejected. A relayed address is recorded by the same rule, apart
// from the endpoint (see BindAttempt.Relayed). Order: input ->
// ServiceUnavailable -> NotFound (unknown handle or wrong key for the role).
// Allowed while draining. Does not allocate.
func (s *MemStore) BindAttemptEndpoint(ctx context.Context, cmd BindAttempt) (AttemptView, Result, error) {
	if err := validateBind(&cmd); err != nil {
		return AttemptView{}, Result{}, err
	}
	now, err := s.begin(ctx)
	if err != nil {
		return AttemptView{}, Result{}, err
	}
	defer s.end()
	ai, r := s.bindAttempt(&cmd)
	if ai < 0 {
		return AttemptView{}, r, nil
	}
	return s.attemptView(ai, now), r, nil
}

func validateBind(cmd *BindAttempt) error {
	if cmd.Role != RoleHost && cmd.Role != RoleClient {
		return errRole
	}
	if err := validEndpoints(cmd.Public, cmd.Local); err != nil {
		return err
	}
	if cmd.Relayed != zeroAddrPort && (!cmd.Relayed.IsValid() || cmd.Relayed.Port() == 0) {
		return errRelayed
	}
	return nil
}

// bindAttempt is BindAttemptEndpoint under the commit lock. It returns the
// attempt's slot when the bind succeeded (fresh or replay), else -1.
func (s *MemStore) bindAttempt(cmd *BindAttempt) (int32, Result) {
	if !s.available.Load() {
		return -1, Result{Outcome: ServiceUnavailable}
	}
	ai, ok := s.attemptByHandle.get(cmd.Handle.UUID)
	if !ok {
		return -1, Result{Outcome: NotFound}
	}
	a := s.attempts.at(ai)
	key, cur, relay := &a.clientKey, &a.peer, &a.peerRelay
	if cmd.Role == RoleHost {
		key, cur, relay = &a.hostKey, &a.host, &a.hostRelay
	}
	if !keyEqual(key, &cmd.Key) {
		return -1, Result{Outcome: NotFound}
	}
	b := packBinding(cmd.Public, cmd.Local)
	if cur.bound() {
		if *cur != b {
			return -1, Result{Outcome: ReplayRejected}
		}
		if !cmd.Relayed.IsValid() {
			return ai, Result{Replay: true}
		}
		r := packEndpoint(cmd.Relayed)
		switch {
		case !relay.valid():
			*relay = r // the endpoint repeats; the relayed address is new
			return ai, Result{}
		case *relay == r:
			return ai, Result{Replay: true}
		}
		return -1, Result{Outcome: ReplayRejected}
	}
	*cur = b
	relay.set(cmd.Relayed)
	if cmd.Role == RoleHost {
		s.pending.remove(&s.listings.at(a.listing).pending, ai)
	}
	return ai, Result{}
}

// ConsumeIntroduction consumes the introduction once: Success the first time
// both endpoints are bound, ReplayRejected after, Conflict while an endpoint
// is missing and always for a relay-only attempt.
func (s *MemStore) ConsumeIntroduction(ctx context.Context, h Handle) (Introduction, Result, error) {
	_, err := s.begin(ctx)
	if err != nil {
		return Introduction{}, Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return Introduction{}, Result{Outcome: ServiceUnavailable}, nil
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok {
		return Introduction{}, Result{Outcome: NotFound}, nil
	}
	a := s.attempts.at(ai)
	switch {
	case a.consumed:
		return Introduction{}, Result{Outcome: ReplayRejected}, nil
	case !a.host.bound() || !a.peer.bound() || a.relayOnly:
		return Introduction{}, Result{Outcome: Conflict}, nil
	}
	s.consume(ai)
	return s.introduction(ai), Result{}, nil
}

// consume marks the introduction consumed. An attempt is in flight until
// either introduction is consumed.
func (s *MemStore) consume(ai int32) {
	a := s.attempts.at(ai)
	if !a.relayConsumed {
		s.inFlight--
	}
	a.consumed = true
}

// Introduction reads back a consumed introduction; Conflict if it has not
// been consumed yet.
func (s *MemStore) Introduction(ctx context.Context, h Handle) (Introduction, Result, error) {
	_, err := s.begin(ctx)
	if err != nil {
		return Introduction{}, Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return Introduction{}, Result{Outcome: ServiceUnavailable}, nil
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok {
		return Introduction{}, Result{Outcome: NotFound}, nil
	}
	if !s.attempts.at(ai).consumed {
		return Introduction{}, Result{Outcome: Conflict}, nil
	}
	return s.introduction(ai), Result{}, nil
}

// AttemptHost returns the presence handle of the listing attempt h belongs
// to. It holds the commit lock shared (never exclusively) and runs no
// cleanup, so it treats anything past its deadline — the attempt, its
// listing's lease, the drain window — as absent. Does not allocate.
func (s *MemStore) AttemptHost(h Handle) (Handle, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.available.Load() {
		return Handle{}, false
	}
	now := s.clock.Now()
	if s.draining.Load() && now >= s.drainDeadline {
		return Handle{}, false
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok || s.attemptExp.deadline(ai) <= now {
		return Handle{}, false
	}
	li := s.attempts.at(ai).listing
	if s.leaseExp.deadline(li) <= now {
		return Handle{}, false
	}
	return s.listings.at(li).presence, true
}
