package memstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// BeginDrain starts the drain window (idempotent: a second call keeps the
// first deadline). New registrations, attempts and renewals are refused at
// once; at the deadline cleanup erases all active state.
func (s *Store) BeginDrain(ctx context.Context) error {
	now, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer s.end()
	if !s.draining.Load() {
		s.drainDeadline = now + s.lim.DrainWindow
		s.draining.Store(true)
	}
	return nil
}

// MarkUnavailable fails closed: every later transition is
// ServiceUnavailable and active state is erased (revocations stay).
func (s *Store) MarkUnavailable() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.available.Store(false)
	s.clearActive()
	s.clearTombs()
}

// Stats reports pool occupancy after cleanup, so expired records are never
// counted.
func (s *Store) Stats() engine.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	s.cleanup(now)
	st := engine.Stats{InstanceID: s.id, Available: s.available.Load(), Draining: s.draining.Load(), InFlight: s.inFlight}
	used := [engine.NumGlobalPools]int{s.listings.n, s.nPresence, s.attempts.n, s.replay.n, s.nRevocations(), s.idem.n}
	ceil := [engine.NumGlobalPools]int{s.lim.MaxListings, s.lim.MaxPresence, s.lim.MaxAttempts, s.lim.MaxReplay, s.lim.MaxRevocations, s.lim.MaxIdempotency}
	for i := range st.Pools {
		st.Pools[i] = engine.PoolStat{Used: used[i], Ceiling: ceil[i]}
	}
	return st
}
