package httpapi

import (
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// DefaultStoreStatsMaxAge is how old the store figures that /metrics,
// /readyz and GET /v1/admin/stats show may be: a shared store (Redis) is
// read for them at most once per this interval per instance, whatever the
// rate of scrapes and probes.
const DefaultStoreStatsMaxAge = time.Second

// StoreStats caches the store's Stats (pool occupancy, attempts in flight,
// availability and drain state: one store call on the Redis store) for
// the scrape and probe endpoints, so that they cannot load a store every
// instance shares: a figure at most maxAge old is served as is, and a
// refresh is shared by every reader that arrives while it runs (they wait
// for its answer rather than each calling the store). A failed read is
// cached too (Available false), so an outage costs no more calls than a
// healthy store. Transitions never read it: they answer from the store.
type StoreStats struct {
	store  engine.Store
	maxAge time.Duration

	mu   sync.Mutex
	st   engine.Stats
	at   time.Time     // when the read of st began; zero: never, or invalidated
	busy chan struct{} // closed when the refresh in progress ends; nil: none
}

// NewStoreStats caches store's Stats for maxAge
// (DefaultStoreStatsMaxAge if zero or less).
func NewStoreStats(store engine.Store, maxAge time.Duration) *StoreStats {
	if maxAge <= 0 {
		maxAge = DefaultStoreStatsMaxAge
	}
	return &StoreStats{store: store, maxAge: maxAge}
}

// Stats answers the store's figures and their age: the cached ones while
// younger than maxAge, else those of a refresh (one store call, shared
// with every concurrent reader).
func (c *StoreStats) Stats() (engine.Stats, time.Duration) {
	c.mu.Lock()
	for {
		if !c.at.IsZero() {
			if age := time.Since(c.at); age < c.maxAge {
				st := c.st
				c.mu.Unlock()
				return st, age
			}
		}
		if c.busy == nil {
			break
		}
		busy := c.busy
		c.mu.Unlock()
		<-busy // another reader's refresh: its answer is fresh
		c.mu.Lock()
		if !c.at.IsZero() {
			st, age := c.st, time.Since(c.at)
			c.mu.Unlock()
			return st, age
		}
	}
	busy := make(chan struct{})
	c.busy = busy
	c.mu.Unlock()

	// The figures are as old as the read's start: what changed in the
	// store before it began is in them, what changed during it may be.
	at := time.Now()
	st := c.store.Stats()
	c.mu.Lock()
	c.st, c.at, c.busy = st, at, nil
	c.mu.Unlock()
	close(busy)
	return st, time.Since(at)
}

// Invalidate makes the next reader refresh: this process changed what the
// figures show (it began a drain), and readiness must say so at once.
// A refresh already running may still answer the old state.
func (c *StoreStats) Invalidate() {
	c.mu.Lock()
	c.at = time.Time{}
	c.mu.Unlock()
}

// Age is how old the cached figures are (refreshing them when older than
// maxAge): the store_stats_age gauge.
func (c *StoreStats) Age() time.Duration {
	_, age := c.Stats()
	return age
}
