package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The fault scenarios (`make ha-evidence`): each scenario test logs one
// line "ha-evidence: {json}" with its figures; the tests run under
// `go test -json`, so every line is attributed to the test that logged it
// and a test that ended without one is seen.

// evidencePrefix starts a scenario's record in a test's log.
const evidencePrefix = "ha-evidence: "

// Evidence is one scenario's record, as a fault test logs it.
type Evidence struct {
	Scenario       string           `json:"scenario"`
	Description    string           `json:"description"`
	Answers        map[string]int64 `json:"answers"`
	RecoveryS      *float64         `json:"recovery_s"`
	RecoveryBoundS *float64         `json:"recovery_bound_s"`
	LostAdmitted   int64            `json:"lost_admitted"`
	// LostStated names the documented window in which the scenario may
	// lose admitted items (a partitioned primary's unreplicated writes):
	// such a loss is shown with it, not flagged. The test itself asserts
	// that nothing was lost outside that window.
	LostStated          string `json:"lost_stated,omitempty"`
	DoubleIntroductions int64  `json:"double_introductions"`
	CeilingBreaches     int64  `json:"ceiling_breaches"`
	CrossTenantReads    int64  `json:"cross_tenant_reads"`

	Test, Package string `json:"-"` // the test that logged it
}

// haTest is one top-level test of the run.
type haTest struct {
	Name, Package string
	Result        string // pass, fail, skip; "" if it never ended (the run was cut)
	LastLog       string
	Evidence      int // lines it (or its subtests) logged
}

// haRun is what one `go test -json` run of the fault tests recorded.
type haRun struct {
	Evidence []*Evidence
	Tests    []*haTest
	Problems []string // lines that could not be read, in order
}

// testEvent is the part of a test2json event read here.
type testEvent struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// parseHA reads a `go test -json` stream.
func parseHA(r io.Reader) (*haRun, error) {
	run := &haRun{}
	tests := map[string]*haTest{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue // build output, package lines
		}
		top, _, _ := strings.Cut(ev.Test, "/")
		key := ev.Package + " " + top
		t := tests[key]
		if t == nil {
			t = &haTest{Name: top, Package: ev.Package}
			tests[key] = t
			run.Tests = append(run.Tests, t)
		}
		switch ev.Action {
		case "pass", "fail", "skip":
			if ev.Test == top {
				t.Result = ev.Action
			}
		case "output":
			out := strings.TrimSpace(ev.Output)
			if _, rest, ok := strings.Cut(out, evidencePrefix); ok {
				var e Evidence
				if err := json.Unmarshal([]byte(rest), &e); err != nil || e.Scenario == "" {
					run.Problems = append(run.Problems, fmt.Sprintf("%s: unreadable evidence line %q", ev.Test, rest))
					continue
				}
				e.Test, e.Package = ev.Test, ev.Package
				run.Evidence = append(run.Evidence, &e)
				t.Evidence++
			} else if ev.Test == top && strings.Contains(out, ".go:") {
				t.LastLog = out // a skipped test's reason is its last log line
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return run, nil
}
