package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// ApplyBatch commits the verified UDP-side transitions of one read batch
// under one acquisition of the commit lock and one cleanup; every op gets
// its own Result (or Err, for invalid input, with nothing changed). Ops run
// in order, so a later op sees an earlier one's effect. If ctx is cancelled
// before or right after the lock is taken, ApplyBatch returns ctx.Err() and
// no op ran. Zero allocations per op.
//
// OpBindAttempt binds, and then, when both endpoints are bound (and the
// attempt is not relay-only), consumes the introduction (FirstIntro,
// IntroReady) or, if it was consumed before, reads it back (IntroReady
// only); when both relayed addresses are recorded, the relay introduction
// likewise (FirstRelay, RelayReady). A rejected bind sets neither.
// OpOutcome records a side's outcome report (see relay_ops.go).
func (s *Store) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	now, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer s.end()
	s.warm(ops)
	for i := range ops {
		s.applyOp(&ops[i], now)
	}
	return nil
}

// warm is a read-only first pass over a batch: it resolves each op's index
// lookup and reads the record and schedule node the op will touch. The
// lookups of different ops are independent, so the CPU overlaps their cache
// misses (at 250,000 listings every op misses); the mutating pass that
// follows then finds its lines in cache and runs at the cost of a small
// store. It changes nothing; s.warmSink only keeps the loads from being
// optimised away.
func (s *Store) warm(ops []engine.Op) {
	var sink uint64
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case engine.OpPresence:
			if li, ok := s.listingByPresence.get(op.Presence.Handle.UUID); ok {
				l := s.listings.at(li)
				sink += l.lastSeq
				if l.pending.head != 0 {
					sink += uint64(s.attempts.at(l.pending.head - 1).handle.UUID[0])
				}
				if int(li) < len(s.presExp.nd) {
					sink += uint64(s.presExp.nd[li].next)
				}
			}
		case engine.OpBindAttempt:
			if ai, ok := s.attemptByHandle.get(op.Bind.Handle.UUID); ok {
				sink += uint64(s.attempts.at(ai).listing)
			}
		case engine.OpOutcome:
			if ai, ok := s.attemptByHandle.get(op.Report.Handle.UUID); ok {
				sink += uint64(s.attempts.at(ai).tenant)
			}
		}
	}
	s.warmSink = sink
}

func (s *Store) applyOp(op *engine.Op, now time.Duration) {
	op.Result, op.Err = engine.Result{}, nil
	op.PresenceView, op.Attempt, op.Intro, op.RelayIntro = engine.PresenceView{}, engine.AttemptView{}, engine.Introduction{}, engine.RelayIntroduction{}
	op.IntroReady, op.FirstIntro, op.RelayReady, op.FirstRelay, op.Duplicate = false, false, false, false, false
	op.Tenant = engine.Tenant{}
	switch op.Kind {
	case engine.OpPresence:
		if op.Err = engine.ValidatePresence(&op.Presence); op.Err != nil {
			return
		}
		op.Result = s.bindPresence(&op.Presence, now, &op.PresenceView)
	case engine.OpBindAttempt:
		if op.Err = engine.ValidateBind(&op.Bind); op.Err != nil {
			return
		}
		ai, r := s.bindAttempt(&op.Bind)
		op.Result = r
		if ai < 0 {
			return
		}
		a := s.attempts.at(ai)
		if a.host.bound() && a.peer.bound() && !a.relayOnly {
			op.IntroReady = true
			if !a.consumed {
				s.consume(ai)
				op.FirstIntro = true
			}
			op.Intro = s.introduction(ai)
		}
		s.relayIntroduce(ai, op)
		op.Attempt = s.attemptView(ai, now)
	case engine.OpOutcome:
		if op.Err = engine.ValidateReport(&op.Report); op.Err != nil {
			return
		}
		op.Result = s.reportOutcome(&op.Report, op, now)
	default:
		op.Err = engine.ErrOpKind
	}
}
