package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// The commit lock. Every transition runs as
//
//	now, err := s.begin(ctx) // ctx checked, lock taken, ctx checked, cleanup
//	if err != nil { return ..., err }
//	defer s.end()
//
// so cancellation observed before or after waiting for the lock changes
// nothing, and expired state is gone before the transition looks at it.

// begin checks ctx, takes the commit lock, checks ctx again, and runs
// cleanup. On error the lock is not held.
func (s *Store) begin(ctx context.Context) (now time.Duration, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if err := ctx.Err(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	now = s.clock.Now()
	s.cleanup(now)
	return now, nil
}

func (s *Store) end() { s.mu.Unlock() }

// beginAvailable is begin for a transition that fails closed: once the
// store is unavailable it releases the lock again and answers
// ServiceUnavailable. Only when it reports locked does the caller hold the
// commit lock, and must then call s.end().
func (s *Store) beginAvailable(ctx context.Context) (now time.Duration, locked bool, res engine.Result, err error) {
	now, err = s.begin(ctx)
	if err != nil {
		return 0, false, engine.Result{}, err
	}
	if !s.available.Load() {
		s.end()
		return 0, false, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	return now, true, engine.Result{}, nil
}

// cleanup runs at the start of every operation under the commit lock: when
// the drain window has ended all active state goes at once; then every
// record whose deadline is <= now is removed, earliest first. Each expired
// record costs O(1) (heaps: O(log n)); nothing is scanned.
func (s *Store) cleanup(now time.Duration) {
	if s.draining.Load() && now >= s.drainDeadline {
		s.clearActive()
	}
	for i := s.revocations.due(now); i >= 0; i = s.revocations.due(now) {
		s.revocations.remove(i)
		s.releaseSubject(i)
	}
	for i := s.tenantRevHeap.due(now); i >= 0; i = s.tenantRevHeap.due(now) {
		s.removeTenantRev(i)
	}
	for i := s.replayHeap.due(now); i >= 0; i = s.replayHeap.due(now) {
		s.removeReplay(i)
	}
	for i := s.idemExp.due(now); i >= 0; i = s.idemExp.due(now) {
		s.removeIdem(i)
	}
	for i := s.presExp.due(now); i >= 0; i = s.presExp.due(now) {
		s.expirePresence(i)
	}
	for i := s.attemptExp.due(now); i >= 0; i = s.attemptExp.due(now) {
		s.removeAttempt(i, engine.EndExpired)
	}
	for i := s.leaseExp.due(now); i >= 0; i = s.leaseExp.due(now) {
		s.removeListing(i, engine.EndLeaseExpired)
	}
	for i := s.tombExp.due(now); i >= 0; i = s.tombExp.due(now) {
		s.removeTomb(i)
	}
}

// clearActive erases listings, presence, attempts, idempotency and replay
// records (revocations stay), as the reference does at the end of drain and
// on MarkUnavailable. O(live records). The attempts leave tombstones
// (drained).
func (s *Store) clearActive() {
	for i := s.leaseExp.due(maxDuration); i >= 0; i = s.leaseExp.due(maxDuration) {
		s.removeListing(i, engine.EndDrained)
	}
	if s.attempts.n != 0 {
		panic("BUG: attempts left after removing every listing")
	}
	for i := s.idemExp.due(maxDuration); i >= 0; i = s.idemExp.due(maxDuration) {
		s.removeIdem(i)
	}
	for i := s.replayHeap.due(maxDuration); i >= 0; i = s.replayHeap.due(maxDuration) {
		s.removeReplay(i)
	}
}

// beginAttempt is beginAvailable for a transition on the attempt of handle
// h: it answers NotFound (lock released) when there is none, else returns
// the attempt's slot with the lock held.
func (s *Store) beginAttempt(ctx context.Context, h engine.Handle) (ai int32, locked bool, res engine.Result, err error) {
	if _, locked, res, err = s.beginAvailable(ctx); !locked {
		return -1, false, res, err
	}
	ai, ok := s.attemptByHandle.get(h.UUID)
	if !ok {
		s.end()
		return -1, false, engine.Result{Outcome: engine.NotFound}, nil
	}
	return ai, true, engine.Result{}, nil
}
