package main

import (
	"math/rand/v2"
	"sync"
)

// activeSet is a changing set of held-listing indexes (the soak's listings
// that are neither deleted nor being deleted), safe for concurrent use.
type activeSet struct {
	mu  sync.Mutex
	idx []int
	pos map[int]int // index -> position in idx
}

func newActiveSet(idx []int) *activeSet {
	a := &activeSet{pos: map[int]int{}}
	for _, i := range idx {
		a.add(i)
	}
	return a
}

func (a *activeSet) add(i int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.pos[i]; !ok {
		a.pos[i] = len(a.idx)
		a.idx = append(a.idx, i)
	}
}

// remove takes i out of the set; false if it was not in it.
func (a *activeSet) remove(i int) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pos[i]
	if !ok {
		return false
	}
	last := a.idx[len(a.idx)-1]
	a.idx[p], a.pos[last] = last, p
	a.idx = a.idx[:len(a.idx)-1]
	delete(a.pos, i)
	return true
}

// at returns the member at position cursor modulo the size (round robin).
func (a *activeSet) at(cursor uint64) (int, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.idx) == 0 {
		return 0, false
	}
	return a.idx[cursor%uint64(len(a.idx))], true
}

// random returns a random member.
func (a *activeSet) random() (int, bool) {
	return a.at(rand.Uint64())
}

func (a *activeSet) len() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.idx)
}

// members returns a copy of the set.
func (a *activeSet) members() []int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]int(nil), a.idx...)
}
