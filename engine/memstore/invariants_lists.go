package memstore

import (
	"fmt"
	"time"
)

// Structural checks of the building blocks, used by CheckInvariants and by
// the unit tests of each structure.

// check verifies list h of chain c: links agree both ways, the count is
// right, there is no cycle, and every slot satisfies ok.
func (c *chain) check(h *listHead, ok func(int32) error) error {
	var prev int32 // slot+1
	n := int32(0)
	for cur := h.head; cur != 0; {
		i := cur - 1
		if int(i) >= len(c.ln) || !c.ln[i].on {
			return fmt.Errorf("slot %d on a list but not linked", i)
		}
		if c.ln[i].prev != prev {
			return fmt.Errorf("slot %d: prev %d, want %d", i, c.ln[i].prev-1, prev-1)
		}
		if n++; n > h.n {
			return fmt.Errorf("list longer than its count %d (cycle?)", h.n)
		}
		if ok != nil {
			if err := ok(i); err != nil {
				return err
			}
		}
		prev = cur
		cur = c.ln[i].next
	}
	if n != h.n {
		return fmt.Errorf("list has %d slots, count says %d", n, h.n)
	}
	if h.tail != prev {
		return fmt.Errorf("tail %d, want %d", h.tail-1, prev-1)
	}
	return nil
}

// check verifies the schedule: links agree both ways, the count is right,
// there is no cycle, deadlines are non-decreasing, every scheduled slot
// satisfies live, no unscheduled node is linked, and (if now >= 0) none is due.
func (e *expiryList) check(live func(int32) bool, now time.Duration) error {
	last := time.Duration(-1 << 63)
	var prev int32 // slot+1
	n := int32(0)
	for cur := e.head; cur != 0; {
		i := cur - 1
		if int(i) >= len(e.nd) || e.nd[i].prev < 0 {
			return fmt.Errorf("slot %d on the schedule but not linked", i)
		}
		nd := &e.nd[i]
		if nd.prev != prev {
			return fmt.Errorf("slot %d: prev %d, want %d", i, nd.prev-1, prev-1)
		}
		if n++; n > e.n {
			return fmt.Errorf("schedule longer than its count %d (cycle?)", e.n)
		}
		if !live(i) {
			return fmt.Errorf("free slot %d scheduled", i)
		}
		if nd.dl < last {
			return fmt.Errorf("slot %d deadline %v before its predecessor's %v", i, nd.dl, last)
		}
		if now >= 0 && nd.dl <= now {
			return fmt.Errorf("slot %d past its deadline %v at %v", i, nd.dl, now)
		}
		last = nd.dl
		prev = cur
		cur = nd.next
	}
	if n != e.n {
		return fmt.Errorf("schedule has %d slots, count says %d", n, e.n)
	}
	if e.tail != prev {
		return fmt.Errorf("tail %d, want %d", e.tail-1, prev-1)
	}
	scheduled := int32(0)
	for i := range e.nd {
		if e.nd[i].prev >= 0 {
			scheduled++
		}
	}
	if scheduled != n {
		return fmt.Errorf("%d nodes marked scheduled, %d on the schedule", scheduled, n)
	}
	return nil
}

// check verifies that the count is right and every key is reachable from
// its home cell: no empty cell lies between a key's home and its cell.
func (x *uuidIndex) check() error {
	n := 0
	mask := len(x.tab) - 1
	for j := range x.tab {
		if x.tab[j].slot == 0 {
			continue
		}
		n++
		for k := x.home(&x.tab[j].key); k != j; k = (k + 1) & mask {
			if x.tab[k].slot == 0 {
				return fmt.Errorf("uuid index: key in cell %d unreachable from its home", j)
			}
		}
	}
	if n != x.n {
		return fmt.Errorf("uuid index holds %d keys, count says %d", n, x.n)
	}
	return nil
}

// check verifies the heap property and the position index.
func (h *deadlineHeap) check(live func(int32) bool, now time.Duration) error {
	for i, it := range h.items {
		if i > 0 && h.items[(i-1)/2].at > it.at {
			return fmt.Errorf("heap order broken at %d", i)
		}
		if int(it.slot) >= len(h.pos) || h.pos[it.slot] != int32(i+1) {
			return fmt.Errorf("heap position of slot %d wrong", it.slot)
		}
		if !live(it.slot) {
			return fmt.Errorf("free slot %d scheduled", it.slot)
		}
		if now >= 0 && it.at <= now {
			return fmt.Errorf("slot %d past its deadline %v at %v", it.slot, it.at, now)
		}
	}
	n := 0
	for _, p := range h.pos {
		if p != 0 {
			n++
		}
	}
	if n != len(h.items) {
		return fmt.Errorf("heap index has %d slots, heap %d", n, len(h.items))
	}
	return nil
}

// check verifies chunk bounds and strict ascending order.
func (s *orderedSet) check() error {
	n := 0
	var last setPos
	for ci, c := range s.chunks {
		if len(c) == 0 || len(c) > chunkMax {
			return fmt.Errorf("chunk %d has %d entries", ci, len(c))
		}
		for _, e := range c {
			if n > 0 && last.cmp(e.pos()) >= 0 {
				return fmt.Errorf("set not strictly ascending at (%d, %v)", e.key, e.id)
			}
			last = e.pos()
			n++
		}
	}
	if n != s.n {
		return fmt.Errorf("set holds %d entries, count says %d", n, s.n)
	}
	if len(s.last) != len(s.chunks) {
		return fmt.Errorf("set has %d chunks, %d last IDs", len(s.chunks), len(s.last))
	}
	for ci, c := range s.chunks {
		if s.last[ci] != c[len(c)-1].pos() {
			return fmt.Errorf("chunk %d ends at %v, last position says %v", ci, c[len(c)-1].pos(), s.last[ci])
		}
	}
	return nil
}

// check verifies the free list against the used flags.
func (s *slab[T]) check() error {
	if len(s.used) != len(s.recs) {
		return fmt.Errorf("slab used flags %d, records %d", len(s.used), len(s.recs))
	}
	seen := make(map[int32]bool, len(s.free))
	for _, i := range s.free {
		if s.used[i] || seen[i] {
			return fmt.Errorf("slab free list holds used or duplicate slot %d", i)
		}
		seen[i] = true
	}
	n := 0
	for _, u := range s.used {
		if u {
			n++
		}
	}
	if n != s.n || n+len(s.free) != len(s.recs) {
		return fmt.Errorf("slab count %d, used %d, free %d, size %d", s.n, n, len(s.free), len(s.recs))
	}
	return nil
}

// checkChains verifies that every live slot is reachable from the hash
// index exactly once, under its own hash.
func checkChains[T any, P hashedRec[T]](x *hashIndex, s *slab[T]) error {
	n := 0
	for sh := range x.m {
		for h, head := range x.m[sh] {
			if h%nShards != uint64(sh) {
				return fmt.Errorf("hash %x in shard %d", h, sh)
			}
			for i, k := head, 0; i >= 0; k++ {
				if !s.live(i) {
					return fmt.Errorf("hash chain reaches free slot %d", i)
				}
				if k > s.n {
					return fmt.Errorf("hash chain cycle")
				}
				hd := P(s.at(i)).hdr()
				if hd.hash != h {
					return fmt.Errorf("slot %d with hash %x on chain of %x", i, hd.hash, h)
				}
				n++
				i = hd.next
			}
		}
	}
	if n != s.n {
		return fmt.Errorf("hash chains reach %d records, %d live", n, s.n)
	}
	return nil
}

// checkHeld checks list h of family c: every slot on it is a live record of
// p (a kind) that held says belongs to the list's holder (a holder kind).
func checkHeld[T any](c *chain, h *listHead, p *slab[T], held func(*T) bool, kind, holder string) error {
	return c.check(h, func(i int32) error {
		if !p.live(i) || !held(p.at(i)) {
			return fmt.Errorf("%s slot %d on the wrong %s", kind, i, holder)
		}
		return nil
	})
}
