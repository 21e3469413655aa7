package client

import (
	"math/rand/v2"
	"time"
)

// Backoff is an exponential backoff with full jitter between Min and Max.
// The zero value is not usable; use a Backoff literal. Not safe for
// concurrent use: each retry loop owns one.
type Backoff struct {
	Min, Max time.Duration
	// Attempts bounds the number of tries (0 means unbounded; the caller's
	// context or deadline then ends the loop).
	Attempts int
	n        int
}

// Next returns the wait before the next try and whether another try is allowed.
// The wait is uniform in [d/2, d] where d doubles from Min up to Max.
func (b *Backoff) Next() (time.Duration, bool) {
	if b.Attempts > 0 && b.n >= b.Attempts-1 {
		return 0, false
	}
	d := b.Min << min(b.n, 20)
	if d > b.Max || d <= 0 {
		d = b.Max
	}
	b.n++
	half := d / 2
	return half + rand.N(half+1), true
}

// Reset starts the sequence again from Min.
func (b *Backoff) Reset() { b.n = 0 }
