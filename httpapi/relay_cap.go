package httpapi

import (
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// DefaultRelayCredentialsPerMinute bounds the relay credentials one
// principal (subject) gets from one instance in a minute
// (--relay-credentials-per-minute): join answers that carry
// one and host relay answers, replays included. A credential lets its
// holder relay traffic until it expires and cannot be withdrawn (see
// docs/operations.md), so handing them out is rate-limited like any
// other costly grant. The count is per instance: a deployment of N
// instances behind a balancer grants at most N times this.
const DefaultRelayCredentialsPerMinute = 120

const relayCapDetail = "relay credentials: this principal's per-minute cap on this instance is reached"

// relayCap counts credentials per subject in fixed one-minute windows.
// The map is emptied when a window ends, so it holds at most the subjects
// active in one minute.
type relayCap struct {
	limit  int
	mu     sync.Mutex
	window int64 // Unix minute
	n      map[engine.Subject]int
}

// take counts one credential for s at now and reports whether it is within
// the cap (a refused one is not counted).
func (c *relayCap) take(s engine.Subject, now time.Time) bool {
	w := now.Unix() / 60
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil || w != c.window {
		c.window, c.n = w, make(map[engine.Subject]int)
	}
	if c.n[s] >= c.limit {
		return false
	}
	c.n[s]++
	return true
}
