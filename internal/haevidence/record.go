// Package haevidence is the fault scenarios' record (`make ha-evidence`,
// docs/benchmarks/ha.md): each scenario test logs one line
// "ha-evidence: {json}" with its figures, and benchreport reads those
// lines back from `go test -json` output. Both sides use Record, so what
// a test writes is what the page reads. Tally counts a concurrent load's
// answers by typed outcome, the figures a Record carries.
package haevidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Prefix starts a scenario's record in a test's log.
const Prefix = "ha-evidence: "

// Record is one scenario's figures. The test asserts its own bounds; the
// line is only the record.
type Record struct {
	Scenario    string           `json:"scenario"`
	Description string           `json:"description"`
	Answers     map[string]int64 `json:"answers"` // by typed outcome; "untyped" must be 0
	// RecoveryS is how long service took to come back (nil: it did not).
	RecoveryS      *float64 `json:"recovery_s,omitempty"`
	RecoveryBoundS *float64 `json:"recovery_bound_s"`
	LostAdmitted   int64    `json:"lost_admitted"`
	// LostStated names the documented window in which the scenario may
	// lose admitted items (a partitioned primary's unreplicated writes):
	// such a loss is shown with it, not flagged. The test itself asserts
	// that nothing was lost outside that window.
	LostStated          string `json:"lost_stated,omitempty"`
	DoubleIntroductions int64  `json:"double_introductions"`
	CeilingBreaches     int64  `json:"ceiling_breaches"`
	CrossTenantReads    int64  `json:"cross_tenant_reads"`
}

// Seconds is d in seconds to the millisecond, as the record states times.
func Seconds(d time.Duration) *float64 {
	s := float64(d.Milliseconds()) / 1000
	return &s
}

// SetTimes sets the recovery and its bound.
func (r *Record) SetTimes(recovery, bound time.Duration) {
	r.RecoveryS = Seconds(recovery)
	b := bound.Seconds()
	r.RecoveryBoundS = &b
}

// Log logs the record as its scenario's one line.
func (r *Record) Log(t testing.TB) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s%s", Prefix, b)
}

// Parse reads the record in a line of test output. ok is false when the
// line holds none; err when it holds one that cannot be read.
func Parse(line string) (r *Record, ok bool, err error) {
	_, rest, ok := strings.Cut(line, Prefix)
	if !ok {
		return nil, false, nil
	}
	r = new(Record)
	if err := json.Unmarshal([]byte(rest), r); err != nil || r.Scenario == "" {
		return nil, true, fmt.Errorf("unreadable evidence line %q", rest)
	}
	return r, true, nil
}
