package engine

import "time"

// expiryList is the expiry schedule of one pool whose lifetime is constant
// (leases, presence, attempts, idempotency records): an intrusive list over
// the pool's slab slots kept in deadline order. Because every new deadline
// is now+TTL with a non-decreasing now, an insert or refresh lands at the
// tail: push and refresh are O(1), and expiry pops from the head in O(1) per
// expired record. A deadline earlier than the tail's (a clock that stepped
// back) is still placed in order by walking back from the tail.
//
// Not safe for concurrent use: the store's commit lock guards it; readers
// holding the read lock may call deadline.
type expiryList struct {
	c  chain
	dl []time.Duration // deadline by slot, valid while on the list
	h  listHead
}

func (e *expiryList) ensure(i int32) {
	e.c.ensure(i)
	for int(i) >= len(e.dl) {
		e.dl = append(e.dl, 0)
	}
}

// push schedules slot i to expire at d.
func (e *expiryList) push(i int32, d time.Duration) {
	e.ensure(i)
	e.dl[i] = d
	at := e.h.tail - 1
	if at < 0 || e.dl[at] <= d {
		e.c.pushBack(&e.h, i)
		return
	}
	for at >= 0 && e.dl[at] > d {
		p := e.c.ln[at].prev - 1
		if p < 0 || e.dl[p] <= d {
			break
		}
		at = p
	}
	e.c.insertBefore(&e.h, i, at)
}

// refresh moves slot i (which must be scheduled) to deadline d.
func (e *expiryList) refresh(i int32, d time.Duration) {
	e.c.remove(&e.h, i)
	e.push(i, d)
}

// remove unschedules slot i.
func (e *expiryList) remove(i int32) { e.c.remove(&e.h, i) }

// has reports whether slot i is scheduled.
func (e *expiryList) has(i int32) bool { return e.c.has(i) }

// deadline returns slot i's deadline (valid only if has(i)).
func (e *expiryList) deadline(i int32) time.Duration { return e.dl[i] }

// due returns the earliest scheduled slot if its deadline is <= now, else -1.
func (e *expiryList) due(now time.Duration) int32 {
	i := e.h.head - 1
	if i >= 0 && e.dl[i] <= now {
		return i
	}
	return -1
}

func (e *expiryList) len() int { return int(e.h.n) }
