package engine

import (
	"sync"
	"time"
)

// Clock gives the store monotonic time for every deadline and wall time only
// for the informational expires_at values it returns.
type Clock interface {
	// Now is monotonic time elapsed since an arbitrary origin.
	Now() time.Duration
	// Wall is the current wall-clock time.
	Wall() time.Time
}

// SystemClock reads the process's monotonic clock.
type SystemClock struct{ origin time.Time }

func NewSystemClock() *SystemClock        { return &SystemClock{origin: time.Now()} }
func (c *SystemClock) Now() time.Duration { return time.Since(c.origin) }
func (c *SystemClock) Wall() time.Time    { return time.Now() }

// ManualClock is a Clock for tests: time moves only when told. Safe for
// concurrent use.
type ManualClock struct {
	mu   sync.Mutex
	now  time.Duration
	wall time.Time
}

func NewManualClock() *ManualClock {
	return &ManualClock{wall: time.Date(2026, 7, 16, 0, 0, 0, 0, time.UTC)}
}

func (c *ManualClock) Now() time.Duration { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *ManualClock) Wall() time.Time    { c.mu.Lock(); defer c.mu.Unlock(); return c.wall }

// Advance moves both monotonic and wall time forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	c.wall = c.wall.Add(d)
	c.mu.Unlock()
}

// MoveWall moves only the wall clock (which must never expire or prolong anything).
func (c *ManualClock) MoveWall(d time.Duration) {
	c.mu.Lock()
	c.wall = c.wall.Add(d)
	c.mu.Unlock()
}
