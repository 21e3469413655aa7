package memstore

import "iter"

// slab holds records of one kind in a slice indexed by int32 slot, with a
// free list so slots are pooled and reused: records are values in one
// backing array, so the GC walks one slice header instead of one pointer per
// record, and a steady state of create/remove does not allocate.
//
// A pointer returned by at is valid only until the next alloc (which may
// move the backing array). Not safe for concurrent use: the owner's commit
// lock guards it.
type slab[T any] struct {
	recs []T
	used []bool
	free []int32
	n    int
}

// alloc returns a free slot holding a zero record.
func (s *slab[T]) alloc() int32 {
	var i int32
	if k := len(s.free); k > 0 {
		i = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		var zero T
		i = int32(len(s.recs))
		s.recs = append(s.recs, zero)
		s.used = append(s.used, false)
	}
	s.used[i] = true
	s.n++
	return i
}

// release zeroes slot i (dropping any pointers it held) and frees it.
func (s *slab[T]) release(i int32) {
	if !s.used[i] {
		panic("BUG: slab release of a free slot")
	}
	var zero T
	s.recs[i] = zero
	s.used[i] = false
	s.free = append(s.free, i)
	s.n--
}

func (s *slab[T]) at(i int32) *T { return &s.recs[i] }

// live reports whether slot i holds a record.
func (s *slab[T]) live(i int32) bool { return i >= 0 && int(i) < len(s.used) && s.used[i] }

// all yields each live slot with its record, in slot order. Nothing may
// allocate or release a slot of s while the walk runs: it is for the O(state)
// checks and renderings (invariants, snapshot), not for transitions.
func (s *slab[T]) all() iter.Seq2[int32, *T] {
	return func(yield func(int32, *T) bool) {
		for i := range s.recs {
			if s.used[i] && !yield(int32(i), &s.recs[i]) {
				return
			}
		}
	}
}

// size is the number of slots ever allocated (live or free).
func (s *slab[T]) size() int { return len(s.recs) }
