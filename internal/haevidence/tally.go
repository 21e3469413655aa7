package haevidence

import (
	"maps"
	"sync"
)

// Tally counts a concurrent load's answers by typed outcome and keeps the
// first few examples of each kind of answer a test reports on failure
// ("untyped", "unusual", ...). It is safe for concurrent use.
type Tally struct {
	mu       sync.Mutex
	answers  map[string]int64
	examples map[string][]string
}

// NewTally is an empty tally whose record names each of zero with a count
// of 0 (e.g. "untyped", so the page shows that none came).
func NewTally(zero ...string) *Tally {
	t := &Tally{answers: map[string]int64{}, examples: map[string][]string{}}
	for _, o := range zero {
		t.answers[o] = 0
	}
	return t
}

// Count counts one answer of outcome.
func (t *Tally) Count(outcome string) { t.Add(outcome, 1) }

// Add counts n answers of outcome.
func (t *Tally) Add(outcome string, n int64) {
	t.mu.Lock()
	t.answers[outcome] += n
	t.mu.Unlock()
}

// Example keeps example under kind unless max are kept already.
func (t *Tally) Example(kind, example string, max int) {
	t.mu.Lock()
	if len(t.examples[kind]) < max {
		t.examples[kind] = append(t.examples[kind], example)
	}
	t.mu.Unlock()
}

// N is the count of outcome.
func (t *Tally) N(outcome string) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.answers[outcome]
}

// Answers is a copy of the counts by outcome.
func (t *Tally) Answers() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return maps.Clone(t.answers)
}

// Examples is a copy of the examples kept under kind.
func (t *Tally) Examples(kind string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.examples[kind]...)
}
