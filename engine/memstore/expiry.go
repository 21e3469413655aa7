package memstore

import "time"

// expiryList is the expiry schedule of one pool whose lifetime is constant
// (leases, presence, attempts, idempotency records): an intrusive list over
// the pool's slab slots kept in deadline order. Because every new deadline
// is now+TTL with a non-decreasing now, an insert or refresh lands at the
// tail: push and refresh are O(1), and expiry pops from the head in O(1) per
// expired record. A deadline earlier than the tail's (a clock that stepped
// back) is still placed in order by walking back from the tail.
//
// A slot's deadline and both links are one 16-byte node in one array (four
// to a cache line), so a refresh reads one line for the slot itself and one
// for each neighbour, not separate link and deadline arrays.
//
// Not safe for concurrent use: the store's commit lock guards it; readers
// holding the read lock may call deadline.
type expiryList struct {
	nd         []expNode // by slot
	head, tail int32     // slot+1; 0 = none
	n          int32
}

// expNode is one slot's place in the schedule. prev and next hold slot+1
// (0 = none); prev is -1 while the slot is not scheduled, so a node
// appended by ensure starts unscheduled.
type expNode struct {
	dl         time.Duration // valid while scheduled
	prev, next int32
}

var unscheduled = expNode{prev: -1}

func (e *expiryList) ensure(i int32) {
	for int(i) >= len(e.nd) {
		e.nd = append(e.nd, unscheduled)
	}
}

// push schedules slot i (which must not be scheduled) to expire at d.
func (e *expiryList) push(i int32, d time.Duration) {
	e.ensure(i)
	if e.nd[i].prev >= 0 {
		panic("BUG: expiry push of a scheduled slot")
	}
	// Find the slot to insert after: the last one whose deadline is <= d.
	at := e.tail
	for at != 0 && e.nd[at-1].dl > d {
		at = e.nd[at-1].prev
	}
	n := &e.nd[i]
	n.dl, n.prev = d, at
	if at == 0 {
		n.next = e.head
		e.head = i + 1
	} else {
		n.next = e.nd[at-1].next
		e.nd[at-1].next = i + 1
	}
	if n.next == 0 {
		e.tail = i + 1
	} else {
		e.nd[n.next-1].prev = i + 1
	}
	e.n++
}

// refresh moves slot i (which must be scheduled) to deadline d.
func (e *expiryList) refresh(i int32, d time.Duration) {
	if e.tail == i+1 && d >= e.nd[i].dl {
		e.nd[i].dl = d // already last, and stays last
		return
	}
	e.remove(i)
	e.push(i, d)
}

// remove unschedules slot i (which must be scheduled).
func (e *expiryList) remove(i int32) {
	n := &e.nd[i]
	if n.prev < 0 {
		panic("BUG: expiry remove of an unscheduled slot")
	}
	if n.prev != 0 {
		e.nd[n.prev-1].next = n.next
	} else {
		e.head = n.next
	}
	if n.next != 0 {
		e.nd[n.next-1].prev = n.prev
	} else {
		e.tail = n.prev
	}
	*n = unscheduled
	e.n--
}

// has reports whether slot i is scheduled.
func (e *expiryList) has(i int32) bool { return int(i) < len(e.nd) && e.nd[i].prev >= 0 }

// deadline returns slot i's deadline (valid only if has(i)).
func (e *expiryList) deadline(i int32) time.Duration { return e.nd[i].dl }

// due returns the earliest scheduled slot if its deadline is <= now, else -1.
func (e *expiryList) due(now time.Duration) int32 {
	i := e.head - 1
	if i >= 0 && e.nd[i].dl <= now {
		return i
	}
	return -1
}

func (e *expiryList) len() int { return int(e.n) }
