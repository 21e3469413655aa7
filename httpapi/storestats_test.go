package httpapi

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// slowStats is a store whose Stats counts its calls and takes a while, as
// a round trip does, so concurrent readers overlap one refresh.
type slowStats struct {
	engine.Store
	calls atomic.Int32
}

func (s *slowStats) Stats() engine.Stats {
	s.calls.Add(1)
	time.Sleep(20 * time.Millisecond)
	return s.Store.Stats()
}

// TestStoreStatsShareOneRefresh: readers arriving together share one store
// call; figures younger than the maximum age cost none; an older one, or an
// invalidated one, is read again, once.
func TestStoreStatsShareOneRefresh(t *testing.T) {
	ms, err := memstore.New(testLimits(), engine.NewManualClock(), engine.RandomKeyring())
	if err != nil {
		t.Fatal(err)
	}
	st := &slowStats{Store: ms}
	c := NewStoreStats(st, 200*time.Millisecond)
	burst := func() {
		t.Helper()
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				if s, age := c.Stats(); !s.Available || age > 200*time.Millisecond {
					t.Errorf("stats available %v age %v", s.Available, age)
				}
			})
		}
		wg.Wait()
	}
	burst()
	burst() // within the maximum age
	if n := st.calls.Load(); n != 1 {
		t.Fatalf("two bursts of 64 readers within the maximum age: %d store calls, want 1", n)
	}
	time.Sleep(250 * time.Millisecond)
	burst()
	if n := st.calls.Load(); n != 2 {
		t.Fatalf("a burst after the maximum age: %d store calls in all, want 2", n)
	}
	if err := ms.BeginDrain(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.Invalidate()
	if s, _ := c.Stats(); !s.Draining {
		t.Fatal("figures read after Invalidate do not show the drain")
	}
	if n := st.calls.Load(); n != 3 {
		t.Fatalf("after Invalidate: %d store calls in all, want 3", n)
	}
}
