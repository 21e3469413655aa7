package memstore

import "time"

// deadlineHeap is the expiry schedule of a pool with variable lifetimes
// (revocations, replay entries): a binary min-heap of slots by deadline with
// a position index, so update and remove of any slot are O(log n) and
// expiry pops the minimum. Not safe for concurrent use.
type deadlineHeap struct {
	items []heapItem
	pos   []int32 // slot -> index+1 in items; 0 = absent
}

type heapItem struct {
	at   time.Duration
	slot int32
}

func (h *deadlineHeap) len() int { return len(h.items) }

func (h *deadlineHeap) has(slot int32) bool { return int(slot) < len(h.pos) && h.pos[slot] != 0 }

// deadline returns slot's deadline (valid only if has(slot)).
func (h *deadlineHeap) deadline(slot int32) time.Duration { return h.items[h.pos[slot]-1].at }

// set schedules slot at d, inserting or moving it.
func (h *deadlineHeap) set(slot int32, d time.Duration) {
	for int(slot) >= len(h.pos) {
		h.pos = append(h.pos, 0)
	}
	if p := h.pos[slot]; p != 0 {
		h.items[p-1].at = d
		h.fix(int(p - 1))
		return
	}
	h.items = append(h.items, heapItem{at: d, slot: slot})
	h.pos[slot] = int32(len(h.items))
	h.up(len(h.items) - 1)
}

// remove unschedules slot (which must be scheduled).
func (h *deadlineHeap) remove(slot int32) {
	i := int(h.pos[slot] - 1)
	last := len(h.items) - 1
	if i != last {
		h.swap(i, last)
	}
	h.items = h.items[:last]
	h.pos[slot] = 0
	if i != last {
		h.fix(i)
	}
}

// due returns the slot with the earliest deadline if it is <= now, else -1.
func (h *deadlineHeap) due(now time.Duration) int32 {
	if len(h.items) > 0 && h.items[0].at <= now {
		return h.items[0].slot
	}
	return -1
}

func (h *deadlineHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *deadlineHeap) swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i].slot] = int32(i + 1)
	h.pos[h.items[j].slot] = int32(j + 1)
}

func (h *deadlineHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h.items[p].at <= h.items[i].at {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *deadlineHeap) down(i int) bool {
	start := i
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.items[r].at < h.items[l].at {
			m = r
		}
		if h.items[i].at <= h.items[m].at {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
