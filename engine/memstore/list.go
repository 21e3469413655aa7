package memstore

// link is one node of an intrusive doubly-linked list over the slots of a
// slab. prev and next hold slot+1 so that 0 means "none" and a zero link is
// "not on any list".
type link struct {
	prev, next int32
	on         bool
}

// listHead is the head of one list. Its zero value is the empty list. It
// lives wherever the list belongs (in a listing record for a listing's
// attempts, in a subject record for its listings, ...).
type listHead struct {
	head, tail int32 // slot+1; 0 = none
	n          int32
}

// chain holds the links of every list of one family (e.g. "attempts of a
// listing") in a slice parallel to a slab: a slot is on at most one list of
// a family. All operations are O(1) and never allocate once the slice has
// grown to the slab's size. Not safe for concurrent use.
type chain struct{ ln []link }

// ensure grows the link slice so slot i is addressable.
func (c *chain) ensure(i int32) {
	for int(i) >= len(c.ln) {
		c.ln = append(c.ln, link{})
	}
}

func (c *chain) has(i int32) bool { return int(i) < len(c.ln) && c.ln[i].on }

// pushBack appends slot i to h.
func (c *chain) pushBack(h *listHead, i int32) {
	c.ensure(i)
	l := &c.ln[i]
	if l.on {
		panic("BUG: chain pushBack of a linked slot")
	}
	*l = link{prev: h.tail, on: true}
	if h.tail != 0 {
		c.ln[h.tail-1].next = i + 1
	} else {
		h.head = i + 1
	}
	h.tail = i + 1
	h.n++
}

// insertBefore links slot i into h just before slot at (at must be on h).
func (c *chain) insertBefore(h *listHead, i, at int32) {
	c.ensure(i)
	l := &c.ln[i]
	if l.on {
		panic("BUG: chain insertBefore of a linked slot")
	}
	p := c.ln[at].prev
	*l = link{prev: p, next: at + 1, on: true}
	c.ln[at].prev = i + 1
	if p != 0 {
		c.ln[p-1].next = i + 1
	} else {
		h.head = i + 1
	}
	h.n++
}

// remove unlinks slot i from h (i must be on h).
func (c *chain) remove(h *listHead, i int32) {
	l := &c.ln[i]
	if !l.on {
		panic("BUG: chain remove of an unlinked slot")
	}
	if l.prev != 0 {
		c.ln[l.prev-1].next = l.next
	} else {
		h.head = l.next
	}
	if l.next != 0 {
		c.ln[l.next-1].prev = l.prev
	} else {
		h.tail = l.prev
	}
	*l = link{}
	h.n--
}

// first returns the first slot of h, or -1.
func (c *chain) first(h *listHead) int32 { return h.head - 1 }

// next returns the slot after i on its list, or -1.
func (c *chain) next(i int32) int32 { return c.ln[i].next - 1 }
