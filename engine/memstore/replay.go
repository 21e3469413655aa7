package memstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// replayRec is one consumed one-time ticket; its deadline lives in
// Store.replayHeap (lifetimes vary per ticket).
type replayRec struct {
	hashed
	packed string // packKey('r', namespace, key)
}

func (s *Store) findReplay(packed string, hv uint64) int32 {
	return chainFind(&s.replayIdx, &s.replay, hv, func(r *replayRec) bool { return r.packed == packed })
}

func (s *Store) removeReplay(i int32) {
	s.replayHeap.remove(i)
	chainRemove(&s.replayIdx, &s.replay, i)
	s.replay.release(i)
}

// ConsumeReplay consumes a one-time ticket: ReplayRejected if it was
// consumed and has not expired, CapacityExceeded(PoolReplay) if the pool is
// full.
func (s *Store) ConsumeReplay(ctx context.Context, cmd engine.ConsumeReplay) (engine.Result, error) {
	life, err := engine.ValidateReplay(&cmd, s.lim.ReplayTTL)
	if err != nil {
		return engine.Result{}, err
	}
	packed := packKey('r', cmd.Namespace, cmd.Key)
	hv := s.hashPacked(packed)
	now, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return res, err
	}
	defer s.end()
	if s.findReplay(packed, hv) >= 0 {
		return engine.Result{Outcome: engine.ReplayRejected}, nil
	}
	if s.replay.n >= s.lim.MaxReplay {
		return engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolReplay}, nil
	}
	i := s.replay.alloc()
	r := s.replay.at(i)
	r.hash = hv
	r.packed = packed
	chainInsert(&s.replayIdx, &s.replay, i)
	s.replayHeap.set(i, now+life)
	return engine.Result{}, nil
}
