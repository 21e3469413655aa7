package engine

import "context"

// replayRec is one consumed one-time ticket; its deadline lives in
// MemStore.replayHeap (lifetimes vary per ticket).
type replayRec struct {
	hashed
	packed string // packKey('r', namespace, key)
}

// Replay ticket limits (ADR 0004 ConsumeReplay).
const (
	MaxReplayNamespace = 64
	MaxReplayKey       = 128
)

var (
	errReplayNamespace = &InputError{Field: "namespace", Reason: "must be 1-64 bytes"}
	errReplayKey       = &InputError{Field: "key", Reason: "must be 1-128 bytes"}
	errReplayLifetime  = &InputError{Field: "lifetime", Reason: "must be 0 (the replay lifetime) or positive and at most the replay lifetime"}
)

func (s *MemStore) findReplay(packed string, hv uint64) int32 {
	for i := s.replayIdx.head(hv); i >= 0; {
		r := s.replay.at(i)
		if r.hash == hv && r.packed == packed {
			return i
		}
		i = r.next
	}
	return -1
}

func (s *MemStore) removeReplay(i int32) {
	s.replayHeap.remove(i)
	chainRemove(&s.replayIdx, &s.replay, i)
	s.replay.release(i)
}

// ConsumeReplay consumes a one-time ticket: ReplayRejected if it was
// consumed and has not expired, CapacityExceeded(PoolReplay) if the pool is
// full.
func (s *MemStore) ConsumeReplay(ctx context.Context, cmd ConsumeReplay) (Result, error) {
	life, err := ValidateReplay(&cmd, s.lim.ReplayTTL)
	if err != nil {
		return Result{}, err
	}
	packed := packKey('r', cmd.Namespace, cmd.Key)
	hv := s.hashPacked(packed)
	now, err := s.begin(ctx)
	if err != nil {
		return Result{}, err
	}
	defer s.end()
	if !s.available.Load() {
		return Result{Outcome: ServiceUnavailable}, nil
	}
	if s.findReplay(packed, hv) >= 0 {
		return Result{Outcome: ReplayRejected}, nil
	}
	if s.replay.n >= s.lim.MaxReplay {
		return Result{Outcome: CapacityExceeded, Pool: PoolReplay}, nil
	}
	i := s.replay.alloc()
	r := s.replay.at(i)
	r.hash = hv
	r.packed = packed
	chainInsert(&s.replayIdx, &s.replay, i)
	s.replayHeap.set(i, now+life)
	return Result{}, nil
}
