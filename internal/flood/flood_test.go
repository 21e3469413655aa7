package flood

import (
	"sync/atomic"
	"testing"
)

// Every index of every group is requested exactly once; Saturated closes
// at the first Saturate, or when a group runs out without one.
func TestFlood(t *testing.T) {
	f := New()
	var seen [2][100]atomic.Int32
	for g := range 2 {
		f.Go(4, 100, func(i int64) {
			if seen[g][i].Add(1) == 1 && g == 0 && i == 50 {
				f.Saturate()
				f.Saturate() // a second call does nothing
			}
		})
	}
	<-f.Saturated()
	f.Wait()
	for g := range seen {
		for i := range seen[g] {
			if n := seen[g][i].Load(); n != 1 {
				t.Fatalf("group %d request %d sent %d times", g, i, n)
			}
		}
	}

	never := New()
	never.Go(3, 10, func(int64) {})
	<-never.Saturated() // closed when the workers ran out
	never.Wait()
}
