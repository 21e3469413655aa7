package redisstore

import (
	"context"
	"errors"

	"github.com/rendezvous/rendezvous/engine"
)

// The deployment's state: the drain (begin_drain.lua, end_drain.lua), the
// fail-closed switch (mark_unavailable.lua) and the pools' occupancy
// (stats.lua), one call each.

// MarkUnavailable fails closed: every later transition is
// ServiceUnavailable and active state is erased (revocations stay).
func (s *Store) MarkUnavailable() {
	_, _, _ = s.call(context.Background(), "rdv_mark_unavailable")
}

// ErrUnavailable is the error of the methods that answer no Result
// (BeginDrain, Revoked, RevokedInTenant) when Redis refuses the call or
// does not answer (the store's log line names which, refusals.go): the
// caller must treat it as ServiceUnavailable, never as "not revoked" or
// "drain started".
var ErrUnavailable = errors.New("redisstore: Redis refused the call or did not answer (service unavailable)")

// BeginDrain starts the drain window (idempotent).
func (s *Store) BeginDrain(ctx context.Context) error {
	_, ok, err := s.call(ctx, "rdv_begin_drain")
	if err == nil && !ok {
		return ErrUnavailable
	}
	return err
}

// Stats reports pool occupancy after cleanup. When Redis does not answer,
// it reports the store unavailable with zero occupancy.
func (s *Store) Stats() engine.Stats {
	// Draining as Draining answers it: this instance's own drain
	// (DrainInstance) or the deployment's, so one call serves readiness.
	st := engine.Stats{InstanceID: s.id, Draining: s.reg.draining.Load()}
	ceil := [engine.NumGlobalPools]int{s.lim.MaxListings, s.lim.MaxPresence, s.lim.MaxAttempts, s.lim.MaxReplay, s.lim.MaxRevocations, s.lim.MaxIdempotency}
	for i := range st.Pools {
		st.Pools[i].Ceiling = ceil[i]
	}
	m, ok, _ := s.call(context.Background(), "rdv_stats")
	a, err := m.ToArray()
	if !ok || err != nil || len(a) != 3+engine.NumGlobalPools {
		return st
	}
	n := ints(a)
	st.Available, st.Draining = n[0] == 0, st.Draining || n[1] == 1
	for i := range st.Pools {
		st.Pools[i].Used = int(n[2+i])
	}
	st.InFlight = int(n[2+engine.NumGlobalPools])
	return st
}

// EndDrain ends the deployment's drain once its window has passed, for a
// server process starting on it. The drain belongs to the shared state and
// so outlives the process that began it: without this, a process started
// after a drained deployment would refuse new work for good. A drain still
// in its window (an operator's drain of the deployment) is left to finish.
// ended reports whether a drain was ended; err is ErrUnavailable when Redis
// did not answer.
func (s *Store) EndDrain(ctx context.Context) (ended bool, err error) {
	m, ok, err := s.call(ctx, "rdv_end_drain")
	if err != nil {
		return false, err
	}
	code, _, rest := reply(m, ok)
	if code != int64(engine.Success) || len(rest) != 1 {
		return false, ErrUnavailable
	}
	n, _ := rest[0].AsInt64()
	return n == 1, nil
}
