package engine

import "context"

// BindAttemptEndpoint binds one role's endpoint: the first binding per role
// wins; the identical binding again is Success with Replay; a different one
// is ReplayRejected. Order: input -> ServiceUnavailable -> NotFound (unknown
// handle or wrong key for the role). Allowed while draining. Does not
// allocate.
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
	return validEndpoints(cmd.Public, cmd.Local)
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
	key, cur := &a.clientKey, &a.peer
	if cmd.Role == RoleHost {
		key, cur = &a.hostKey, &a.host
	}
	if !keyEqual(key, &cmd.Key) {
		return -1, Result{Outcome: NotFound}
	}
	b := packBinding(cmd.Public, cmd.Local)
	if cur.bound() {
		if *cur == b {
			return ai, Result{Replay: true}
		}
		return -1, Result{Outcome: ReplayRejected}
	}
	*cur = b
	if cmd.Role == RoleHost {
		s.pending.remove(&s.listings.at(a.listing).pending, ai)
	}
	return ai, Result{}
}

// ConsumeIntroduction consumes the introduction once: Success the first time
// both endpoints are bound, ReplayRejected after, Conflict while an endpoint
// is missing.
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
	case !a.host.bound() || !a.peer.bound():
		return Introduction{}, Result{Outcome: Conflict}, nil
	}
	s.consume(ai)
	return s.introduction(ai), Result{}, nil
}

func (s *MemStore) consume(ai int32) {
	s.attempts.at(ai).consumed = true
	s.inFlight--
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
