package main

import (
	"fmt"
	"testing"
)

// statsPools is the pools member of /v1/admin/stats.
type statsPools struct {
	Pools map[string]struct{ Used, Ceiling int } `json:"pools"`
}

// over lists the pools above their ceiling, as "name used > ceiling".
func (st *statsPools) over() []string {
	var over []string
	for name, pool := range st.Pools {
		if pool.Used > pool.Ceiling {
			over = append(over, fmt.Sprintf("%s %d > %d", name, pool.Used, pool.Ceiling))
		}
	}
	return over
}

// ceilingBreaches counts the pools above their ceiling in p's stats (an
// error for each).
func ceilingBreaches(t *testing.T, p *proc) int {
	t.Helper()
	var st statsPools
	p.freshStats(t, statsToken(p.tokens), &st)
	over := st.over()
	for _, o := range over {
		t.Errorf("pool above its ceiling: %s", o)
	}
	return len(over)
}
