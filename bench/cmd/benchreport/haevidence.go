package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rendezvous/rendezvous/internal/haevidence"
)

// The fault scenarios (`make ha-evidence`): each scenario test logs one
// line "ha-evidence: {json}" with its figures; the tests run under
// `go test -json`, so every line is attributed to the test that logged it
// and a test that ended without one is seen.

// Evidence is one scenario's record, as a fault test logs it, and the test
// that logged it.
type Evidence struct {
	haevidence.Record
	Test, Package string
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
			if rec, ok, err := haevidence.Parse(out); ok {
				if err != nil {
					run.Problems = append(run.Problems, fmt.Sprintf("%s: %v", ev.Test, err))
					continue
				}
				run.Evidence = append(run.Evidence, &Evidence{Record: *rec, Test: ev.Test, Package: ev.Package})
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
