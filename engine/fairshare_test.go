package engine

import "testing"

// FairShare: alone, a tenant fills up to its quota; with others in the
// pool, only while it holds fewer than are free; never at its quota.
func TestFairShare(t *testing.T) {
	for _, c := range []struct {
		held, used, pool, quota int
		want                    bool
	}{
		{0, 0, 10, 5, true},   // first record of an empty pool
		{4, 4, 10, 5, true},   // alone, below its quota
		{5, 5, 10, 5, false},  // alone, at its quota
		{0, 9, 10, 10, true},  // holding none: the last free record
		{1, 9, 10, 10, false}, // holding one, one free
		{3, 6, 10, 10, true},  // 3 < 4 free
		{4, 6, 10, 10, false}, // 4 = 4 free
		{2, 5, 10, 2, false},  // at its quota, room or not
	} {
		if got := FairShare(c.held, c.used, c.pool, c.quota); got != c.want {
			t.Errorf("FairShare(%d, %d, %d, %d) = %v, want %v", c.held, c.used, c.pool, c.quota, got, c.want)
		}
	}
}
