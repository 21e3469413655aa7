package memstore

import (
	"cmp"
	"encoding/binary"

	"github.com/rendezvous/rendezvous/engine"
)

// orderedSet is a set of (key, listing ID, slot) entries ordered by (key,
// ID): a sorted array of sorted chunks of at most chunkMax entries. A set
// ordered by ID alone keeps every key 0. Insert, delete and seek cost a
// binary search over chunks plus a memmove inside one chunk, so a browse
// page costs O(log n + page), never a scan of the tenant. Chunks are
// allocated with spare capacity, so inserts into a chunk with room do not
// allocate. Not safe for concurrent use.
type orderedSet struct {
	chunks [][]setEntry
	// last[i] is the last position of chunks[i]. The binary search over
	// chunks reads this one contiguous array instead of one separately
	// allocated chunk per step: at 250,000 listings that is a few cache
	// lines instead of a dozen misses per seek.
	last []setPos
	n    int
}

type setEntry struct {
	key  int64
	id   engine.UUID
	slot int32
}

// setPos is a position in a set's order: (key, ID).
type setPos struct {
	key int64
	id  engine.UUID
}

func (e *setEntry) pos() setPos { return setPos{key: e.key, id: e.id} }

// before reports whether e comes before f in (key, ID) order.
func (e *setEntry) before(f *setEntry) bool {
	if e.key != f.key {
		return e.key < f.key
	}
	if a, b := binary.BigEndian.Uint64(e.id[:8]), binary.BigEndian.Uint64(f.id[:8]); a != b {
		return a < b
	}
	return binary.BigEndian.Uint64(e.id[8:]) < binary.BigEndian.Uint64(f.id[8:])
}

// cmp orders positions by key, then ID. The IDs compare as two big-endian
// words, not byte by byte: the binary searches and the merge of two sets
// call this for every step.
func (p setPos) cmp(q setPos) int {
	switch {
	case p.key < q.key:
		return -1
	case p.key > q.key:
		return 1
	}
	if c := cmp.Compare(binary.BigEndian.Uint64(p.id[:8]), binary.BigEndian.Uint64(q.id[:8])); c != 0 {
		return c
	}
	return cmp.Compare(binary.BigEndian.Uint64(p.id[8:]), binary.BigEndian.Uint64(q.id[8:]))
}

const chunkMax = 64

func (s *orderedSet) len() int { return s.n }

// chunkFor returns the index of the first chunk whose last position is >=
// p, or len(chunks) if p is after every entry.
func (s *orderedSet) chunkFor(p setPos) int {
	lo, hi := 0, len(s.last)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.last[m].cmp(p) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// search returns the first index in c whose position is >= p.
func search(c []setEntry, p setPos) int {
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m].pos().cmp(p) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insert adds e; it reports false (and changes nothing) if e's position is
// present.
func (s *orderedSet) insert(e setEntry) bool {
	ep := e.pos()
	if len(s.chunks) == 0 {
		s.appendChunk(e)
		return true
	}
	ci := s.chunkFor(ep)
	if ci == len(s.chunks) {
		ci--
	}
	c := s.chunks[ci]
	p := search(c, ep)
	if p < len(c) && c[p].pos() == ep {
		return false
	}
	if len(c) == chunkMax && ci == len(s.chunks)-1 && p == len(c) {
		// Past the last entry (the creation-time set grows this way):
		// start a new chunk rather than split, so such a set's chunks
		// stay full instead of half full.
		s.appendChunk(e)
		return true
	}
	if len(c) == chunkMax {
		// Split in halves, then insert into the half that covers e.
		right := make([]setEntry, chunkMax/2, chunkMax)
		copy(right, c[chunkMax/2:])
		c = c[:chunkMax/2]
		s.chunks[ci] = c
		s.chunks = append(s.chunks, nil)
		copy(s.chunks[ci+2:], s.chunks[ci+1:])
		s.chunks[ci+1] = right
		s.last = append(s.last, setPos{})
		copy(s.last[ci+2:], s.last[ci+1:])
		s.last[ci] = c[len(c)-1].pos()
		s.last[ci+1] = right[len(right)-1].pos()
		if p > chunkMax/2 || (p == chunkMax/2 && ep.cmp(right[0].pos()) > 0) {
			ci++
			p -= chunkMax / 2
			c = right
		}
	}
	c = append(c, setEntry{})
	copy(c[p+1:], c[p:])
	c[p] = e
	s.chunks[ci] = c
	s.last[ci] = c[len(c)-1].pos()
	s.n++
	return true
}

// appendChunk adds e, after every entry, in a chunk of its own.
func (s *orderedSet) appendChunk(e setEntry) {
	c := make([]setEntry, 1, chunkMax)
	c[0] = e
	s.chunks = append(s.chunks, c)
	s.last = append(s.last, e.pos())
	s.n++
}

// delete removes the entry at position ep; it reports whether it was
// present.
func (s *orderedSet) delete(ep setPos) bool {
	ci := s.chunkFor(ep)
	if ci == len(s.chunks) {
		return false
	}
	c := s.chunks[ci]
	p := search(c, ep)
	if p == len(c) || c[p].pos() != ep {
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
		s.last[ci] = c[len(c)-1].pos()
	}
	return true
}

// setIter walks a set ascending or descending; it is invalidated by any
// change. ci < 0 or ci >= len(chunks) is the end.
type setIter struct {
	s      *orderedSet
	ci, pi int
	desc   bool
}

// seek returns an iterator at the first entry with ID > after (or the first
// entry if !hasAfter), ascending, in a set ordered by ID alone.
func (s *orderedSet) seek(after engine.UUID, hasAfter bool) setIter {
	if !hasAfter {
		return s.first(false)
	}
	return s.seekPos(setPos{id: after}, false, false)
}

// first returns an iterator at the first entry of the walk (the last entry
// when desc).
func (s *orderedSet) first(desc bool) setIter {
	if !desc {
		return setIter{s: s}
	}
	it := setIter{s: s, ci: len(s.chunks) - 1, desc: true}
	if it.ci >= 0 {
		it.pi = len(s.chunks[it.ci]) - 1
	}
	return it
}

// seekPos returns an iterator at the first entry after p in the walk's
// direction (ascending: the first > p; descending: the last < p), or at p
// itself when inclusive and present.
func (s *orderedSet) seekPos(p setPos, inclusive, desc bool) setIter {
	it := setIter{s: s, desc: desc}
	it.ci = s.chunkFor(p)
	if it.ci == len(s.chunks) {
		if desc { // every entry is before p
			return s.first(true)
		}
		return it
	}
	c := s.chunks[it.ci]
	it.pi = search(c, p) // first >= p; c is not empty and ends >= p
	at := c[it.pi].pos() == p
	switch {
	case !desc && at && !inclusive:
		it.pi++
		if it.pi == len(c) {
			it.ci++
			it.pi = 0
		}
	case desc && !(at && inclusive):
		it.back()
	}
	return it
}

// back steps one entry towards the start.
func (it *setIter) back() {
	it.pi--
	if it.pi < 0 {
		it.ci--
		if it.ci >= 0 {
			it.pi = len(it.s.chunks[it.ci]) - 1
		}
	}
}

// next returns the current entry and advances; ok is false at the end.
func (it *setIter) next() (e setEntry, ok bool) {
	if p := it.nextRef(); p != nil {
		return *p, true
	}
	return e, false
}

// nextRef is next without the copy: the current entry in place (valid
// until the set changes), nil at the end. The browse walk reads every
// entry through it.
func (it *setIter) nextRef() *setEntry {
	if it.ci < 0 || it.ci >= len(it.s.chunks) {
		return nil
	}
	c := it.s.chunks[it.ci]
	e := &c[it.pi]
	if it.desc {
		it.back()
		return e
	}
	it.pi++
	if it.pi == len(c) {
		it.ci++
		it.pi = 0
	}
	return e
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
