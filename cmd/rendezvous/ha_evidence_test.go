package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// haEvidence is a fault scenario's record, logged as its one "ha-evidence:"
// line that `make ha-evidence` collects into docs/benchmarks/ha.md. The
// test asserts its own bounds; the line is only the record.
type haEvidence struct {
	Scenario            string         `json:"scenario"`
	Description         string         `json:"description"`
	Answers             map[string]int `json:"answers"` // by typed outcome; "untyped" must be 0
	RecoveryS           float64        `json:"recovery_s"`
	RecoveryBoundS      float64        `json:"recovery_bound_s"`
	LostAdmitted        int            `json:"lost_admitted"`
	LostStated          string         `json:"lost_stated,omitempty"` // the documented window a loss may fall in
	DoubleIntroductions int            `json:"double_introductions"`
	CeilingBreaches     int            `json:"ceiling_breaches"`
	CrossTenantReads    int            `json:"cross_tenant_reads"`
}

func (e *haEvidence) log(t *testing.T, recovery, bound time.Duration) {
	t.Helper()
	e.RecoveryS, e.RecoveryBoundS = float64(recovery.Milliseconds())/1000, bound.Seconds()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ha-evidence: %s", b)
}

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
	p.call("GET", "/v1/admin/stats", statsToken(p.tokens), nil).expect(t, "stats", http.StatusOK, &st)
	over := st.over()
	for _, o := range over {
		t.Errorf("pool above its ceiling: %s", o)
	}
	return len(over)
}
