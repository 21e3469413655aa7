package memstore

import "github.com/rendezvous/rendezvous/engine"

// orderedSet is a set of (listing ID, slot) entries ordered by ID: a sorted
// array of sorted chunks of at most chunkMax entries. Insert, delete and
// seek cost a binary search over chunks plus a memmove inside one chunk, so
// a browse page costs O(log n + page), never a scan of the tenant. Chunks are
// allocated with spare capacity, so inserts into a chunk with room do not
// allocate. Not safe for concurrent use.
type orderedSet struct {
	chunks [][]setEntry
	// last[i] is the last ID of chunks[i]. The binary search over chunks
	// reads this one contiguous array instead of one separately allocated
	// chunk per step: at 250,000 listings that is a few cache lines
	// instead of a dozen misses per seek.
	last []engine.UUID
	n    int
}

type setEntry struct {
	id   engine.UUID
	slot int32
}

const chunkMax = 64

func (s *orderedSet) len() int { return s.n }

// chunkFor returns the index of the first chunk whose last ID is >= id, or
// len(chunks) if id is greater than every entry.
func (s *orderedSet) chunkFor(id engine.UUID) int {
	lo, hi := 0, len(s.last)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.last[m].Compare(id) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// search returns the first index in c whose ID is >= id.
func search(c []setEntry, id engine.UUID) int {
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m].id.Compare(id) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insert adds e; it reports false (and changes nothing) if e.id is present.
func (s *orderedSet) insert(e setEntry) bool {
	if len(s.chunks) == 0 {
		c := make([]setEntry, 1, chunkMax)
		c[0] = e
		s.chunks = append(s.chunks, c)
		s.last = append(s.last, e.id)
		s.n++
		return true
	}
	ci := s.chunkFor(e.id)
	if ci == len(s.chunks) {
		ci--
	}
	c := s.chunks[ci]
	p := search(c, e.id)
	if p < len(c) && c[p].id == e.id {
		return false
	}
	if len(c) == chunkMax {
		// Split in halves, then insert into the half that covers e.id.
		right := make([]setEntry, chunkMax/2, chunkMax)
		copy(right, c[chunkMax/2:])
		c = c[:chunkMax/2]
		s.chunks[ci] = c
		s.chunks = append(s.chunks, nil)
		copy(s.chunks[ci+2:], s.chunks[ci+1:])
		s.chunks[ci+1] = right
		s.last = append(s.last, engine.UUID{})
		copy(s.last[ci+2:], s.last[ci+1:])
		s.last[ci] = c[len(c)-1].id
		s.last[ci+1] = right[len(right)-1].id
		if p > chunkMax/2 || (p == chunkMax/2 && e.id.Compare(right[0].id) > 0) {
			ci++
			p -= chunkMax / 2
			c = right
		}
	}
	c = append(c, setEntry{})
	copy(c[p+1:], c[p:])
	c[p] = e
	s.chunks[ci] = c
	s.last[ci] = c[len(c)-1].id
	s.n++
	return true
}

// delete removes id; it reports whether it was present.
func (s *orderedSet) delete(id engine.UUID) bool {
	ci := s.chunkFor(id)
	if ci == len(s.chunks) {
		return false
	}
	c := s.chunks[ci]
	p := search(c, id)
	if p == len(c) || c[p].id != id {
		return false
	}
	copy(c[p:], c[p+1:])
	c = c[:len(c)-1]
	s.chunks[ci] = c
	s.n--
	switch {
	case len(c) == 0:
		copy(s.chunks[ci:], s.chunks[ci+1:])
		s.chunks[len(s.chunks)-1] = nil
		s.chunks = s.chunks[:len(s.chunks)-1]
		s.last = append(s.last[:ci], s.last[ci+1:]...)
	case ci+1 < len(s.chunks) && len(c)+len(s.chunks[ci+1]) <= chunkMax/2:
		// Merge small neighbours so the chunk count stays O(n/chunkMax).
		s.chunks[ci] = append(c, s.chunks[ci+1]...)
		copy(s.chunks[ci+1:], s.chunks[ci+2:])
		s.chunks[len(s.chunks)-1] = nil
		s.chunks = s.chunks[:len(s.chunks)-1]
		s.last = append(s.last[:ci], s.last[ci+1:]...) // chunk ci now ends where ci+1 did
	default:
		s.last[ci] = c[len(c)-1].id
	}
	return true
}

// setIter walks a set in ascending order; it is invalidated by any change.
type setIter struct {
	s      *orderedSet
	ci, pi int
}

// seek returns an iterator at the first entry with ID > after (or the first
// entry if !hasAfter).
func (s *orderedSet) seek(after engine.UUID, hasAfter bool) setIter {
	it := setIter{s: s}
	if !hasAfter {
		return it
	}
	it.ci = s.chunkFor(after)
	if it.ci < len(s.chunks) {
		c := s.chunks[it.ci]
		it.pi = search(c, after)
		if it.pi < len(c) && c[it.pi].id == after {
			it.pi++
		}
		if it.pi == len(c) {
			it.ci++
			it.pi = 0
		}
	}
	return it
}

// next returns the current entry and advances; ok is false at the end.
func (it *setIter) next() (e setEntry, ok bool) {
	if it.ci >= len(it.s.chunks) {
		return e, false
	}
	c := it.s.chunks[it.ci]
	e = c[it.pi]
	it.pi++
	if it.pi == len(c) {
		it.ci++
		it.pi = 0
	}
	return e, true
}

// each calls f for every entry in order, stopping at the first error.
func (s *orderedSet) each(f func(setEntry) error) error {
	for _, c := range s.chunks {
		for _, e := range c {
			if err := f(e); err != nil {
				return err
			}
		}
	}
	return nil
}
