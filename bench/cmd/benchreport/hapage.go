package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// haPointer is the benchmarks page's pointer to the fault scenarios page.
const haPointer = "Fault scenarios of several instances over Redis (an instance or the Redis primary killed, partitions; answers by outcome, recovery, lost items): [benchmarks/ha.md](benchmarks/ha.md), written by `make ha-evidence`."

// haMeta is how the run was made: the command, when, and on what.
type haMeta struct {
	Command string
	Date    time.Time
	Machine []string // one line each: CPUs, kernel, redis-server, Go
}

// haTables renders the generated region of docs/benchmarks/ha.md and
// returns what is flagged: a scenario over one of its bounds or with an
// untyped answer, a failed or skipped scenario test, a test that ended
// without its evidence line, an expected scenario that did not report, an
// unreadable line.
func haTables(w io.Writer, run *haRun, expect []string, m haMeta) (flags []string) {
	fmt.Fprintf(w, "\nRun on %s:\n\n```\n%s\n%s\n```\n\n", m.Date.UTC().Format("2006-01-02 15:04 UTC"), m.Command, strings.Join(m.Machine, "\n"))
	evs := slices.Clone(run.Evidence)
	slices.SortStableFunc(evs, func(a, b *Evidence) int { return cmp.Compare(a.Scenario, b.Scenario) })

	if len(evs) == 0 {
		fmt.Fprintln(w, "_No scenario logged an evidence line in this run._")
	} else {
		about := make([]string, len(evs))
		for i, e := range evs {
			about[i] = fmt.Sprintf("**%s** (`%s`, %s): %s", e.Scenario, e.Test, shortPkg(e.Package), e.Description)
		}
		bullets(w, "What each scenario does:", about)
		fmt.Fprintln(w)
		tableHead(w, "llrrrrrl", "scenario", "answers by outcome", "recovery (bound)", "lost admitted", "double introductions", "ceiling breaches", "cross-tenant reads", "bounds")
		for _, e := range evs {
			bad := e.breaches()
			for _, b := range bad {
				flags = append(flags, e.Scenario+": "+b)
			}
			v := "met"
			if len(bad) > 0 {
				v = "**not met**: " + strings.Join(bad, "; ")
			}
			lost := strconv.FormatInt(e.LostAdmitted, 10)
			if e.LostStated != "" {
				lost += " (stated: " + e.LostStated + ")"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %d | %d | %d | %s |\n", e.Scenario, fmtAnswers(e.Answers), fmtRecovery(e),
				lost, e.DoubleIntroductions, e.CeilingBreaches, e.CrossTenantReads, v)
		}
	}
	seen := map[string]bool{}
	for _, e := range evs {
		seen[e.Scenario] = true
	}
	for _, s := range expect {
		if !seen[s] {
			flags = append(flags, s+": expected scenario missing from the run")
		}
	}
	for _, t := range run.Tests {
		name := t.Name + " (" + shortPkg(t.Package) + ")"
		switch {
		case t.Result == "skip":
			flags = append(flags, name+": skipped: "+t.LastLog)
		case t.Result == "fail":
			flags = append(flags, name+": test failed")
		case t.Result == "":
			flags = append(flags, name+": test never finished")
		}
		if t.Result != "skip" && t.Evidence == 0 {
			flags = append(flags, name+": no evidence line (scenario missing)")
		}
	}
	if len(run.Tests) == 0 {
		flags = append(flags, "no scenario test ran (check the test name pattern and packages)")
	}
	flags = append(flags, run.Problems...)
	fmt.Fprintln(w)
	if len(flags) == 0 {
		fmt.Fprintln(w, "Every scenario test passed, logged its line, and stayed within its bounds.")
	} else {
		bullets(w, "**Flagged in this run:**", flags)
	}
	fmt.Fprintln(w)
	return flags
}

// breaches lists the safety and liveness figures that are off.
func (e *Evidence) breaches() []string {
	var bad []string
	if n := e.Answers["untyped"]; n > 0 {
		bad = append(bad, fmt.Sprintf("%d untyped answers", n))
	}
	if len(e.Answers) == 0 {
		bad = append(bad, "no answers recorded")
	}
	switch {
	case e.RecoveryBoundS != nil && e.RecoveryS == nil:
		bad = append(bad, "recovery not measured")
	case e.RecoveryBoundS != nil && *e.RecoveryS > *e.RecoveryBoundS:
		bad = append(bad, "recovery over its bound")
	}
	for _, f := range []struct {
		n    int64
		what string
	}{{e.unstatedLoss(), "lost admitted items"}, {e.DoubleIntroductions, "double introductions"},
		{e.CeilingBreaches, "ceiling breaches"}, {e.CrossTenantReads, "cross-tenant reads"}} {
		if f.n != 0 {
			bad = append(bad, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	return bad
}

// unstatedLoss is the loss to flag: none when the scenario states the
// window its loss falls in.
func (e *Evidence) unstatedLoss() int64 {
	if e.LostStated != "" {
		return 0
	}
	return e.LostAdmitted
}

// fmtAnswers lists outcomes by count, most first; untyped is always shown.
func fmtAnswers(a map[string]int64) string {
	type kv struct {
		k string
		n int64
	}
	var all []kv
	for k, n := range a {
		if k != "untyped" {
			all = append(all, kv{k, n})
		}
	}
	slices.SortFunc(all, func(x, y kv) int { return cmp.Or(cmp.Compare(y.n, x.n), cmp.Compare(x.k, y.k)) })
	parts := make([]string, 0, len(all)+1)
	for _, p := range all {
		parts = append(parts, fmt.Sprintf("%s %d", p.k, p.n))
	}
	return strings.Join(append(parts, fmt.Sprintf("untyped %d", a["untyped"])), ", ")
}

func fmtRecovery(e *Evidence) string {
	r, b := "not measured", ""
	if e.RecoveryS != nil {
		r = fmt.Sprintf("%.2f s", *e.RecoveryS)
	}
	if e.RecoveryBoundS != nil {
		b = fmt.Sprintf(" (≤ %g s)", *e.RecoveryBoundS)
	}
	return r + b
}

// shortPkg drops the module path from a package path.
func shortPkg(p string) string {
	if _, rest, ok := strings.Cut(p, "/rendezvous/rendezvous/"); ok {
		return rest
	}
	return p
}

// haMachine describes this machine: CPUs, kernel, redis-server, Go and
// its load average.
func haMachine() []string {
	cpu := fmt.Sprintf("cpu:    %d", runtime.NumCPU())
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu += " x " + strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = runtime.GOOS + " " + strings.TrimSpace(string(b))
	}
	redis := "not installed"
	if out, err := exec.Command("redis-server", "--version").Output(); err == nil {
		if f := strings.Fields(string(out)); len(f) >= 3 {
			redis = strings.Join(f[:3], " ") // "Redis server v=7.0.15"
		}
	}
	lines := []string{cpu, "kernel: " + kernel, "redis:  " + redis, "go:     " + runtime.Version()}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		// Other work on a shared machine stretches recovery times.
		lines = append(lines, "load:   "+strings.Join(strings.Fields(string(b))[:3], " ")+" at the end of the run")
	}
	return lines
}

// renderHA rewrites the results region of the scenarios page from a
// `go test -json` run of the fault tests; it returns what is flagged.
func renderHA(in io.Reader, docPath string, expect []string, m haMeta) ([]string, error) {
	run, err := parseHA(in)
	if err != nil {
		return nil, err
	}
	var t strings.Builder
	flags := haTables(&t, run, expect, m)
	if err := os.WriteFile(docPath, []byte(fillResults(readDoc(docPath), t.String())), 0o644); err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", docPath, err)
	}
	return flags, nil
}
