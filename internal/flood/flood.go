// Package flood runs the floods of the fairness tests (the store contract
// suite's and the server's end-to-end ones): a fixed number of requests
// taken in index order by several goroutines, and a signal that the
// flooders hold all they can get, so the victims start against a saturated
// store while the flood goes on.
package flood

import (
	"sync"
	"sync/atomic"
)

// Flood is one or more groups of flooding goroutines. Make it with New.
type Flood struct {
	wg        sync.WaitGroup
	once      sync.Once
	saturated chan struct{}
}

// New is a Flood with no goroutines yet.
func New() *Flood { return &Flood{saturated: make(chan struct{})} }

// Go starts workers goroutines that share the requests 0 to n-1: each calls
// do(i) for the next index until none is left. A goroutine that runs out
// calls Saturate, so a flood that never saturates cannot hold the victims
// back.
func (f *Flood) Go(workers int, n int64, do func(i int64)) {
	var next atomic.Int64
	for range workers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.Saturate()
			for i := next.Add(1) - 1; i < n; i = next.Add(1) - 1 {
				do(i)
			}
		}()
	}
}

// Saturate says the flood holds all it can get; calls after the first do
// nothing.
func (f *Flood) Saturate() { f.once.Do(func() { close(f.saturated) }) }

// Saturated is closed by the first Saturate.
func (f *Flood) Saturated() <-chan struct{} { return f.saturated }

// Wait waits until every request of every group was sent and answered.
func (f *Flood) Wait() { f.wg.Wait() }
