// Command benchreport writes the measured pages of a `make bench` run,
// docs/benchmarks/results/<area>.md, one per area that ran: the raw
// `go test -bench` output of each area (store, udp, http, shared-state),
// its benchstat text, the load tester's result files of each run, and the
// machine and commands the run recorded. It owns every page it writes (no
// hand-written text in them) and writes only the areas named in -areas, so
// an area not run keeps its page. The per-area documents in
// docs/benchmarks/ are read only for their baseline declarations.
// bench/run.sh runs the benchmarks; bench/compare.sh writes area compare.
//
//	benchreport -in bench/out -results docs/benchmarks/results -areas "store udp http load shared-state"
//
// With -ha it writes the fault scenarios page instead (`make ha-evidence`):
// the ha-evidence lines of a `go test -json` run of the fault tests.
//
//	benchreport -ha bench/out/ha.json -ha-doc docs/benchmarks/ha.md -ha-command '...'
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// areas are the benchmark suites, in page order: file stem and title.
var areas = [][2]string{
	{"store", "Store: in-memory store vs the reference full-scan store"},
	{"udp", "UDP: mediator vs a raw batched echo"},
	{"http", "HTTP: handlers vs a bare fasthttp handler"},
}

// allAreas are what -areas accepts, with each page's title.
var allAreas = map[string]string{
	"store": areas[0][1], "udp": areas[1][1], "http": areas[2][1],
	"load":         "Load: ceiling proof, shedding and the UDP presence rate",
	"shared-state": "Shared state: the Redis store against the targets",
	"compare":      "coturn comparison: authenticated presence against plain Binding",
}

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "bench/out", "directory with <area>.txt, <area>.benchstat.txt, meta.txt, load/, compare/")
	docs := fs.String("docs", "docs/benchmarks", "directory with the per-area documents <area>.md and load.md")
	results := fs.String("results", "docs/benchmarks/results", "directory of the generated pages <area>.md")
	only := fs.String("areas", "store udp http load shared-state", "the areas this run measured (space or comma separated): only their pages are written")
	ha := fs.String("ha", "", "instead: a `go test -json` run of the fault scenario tests, whose ha-evidence lines go into -ha-doc")
	haDoc := fs.String("ha-doc", "docs/benchmarks/ha.md", "the fault scenarios page, rewritten between its results markers")
	haCmd := fs.String("ha-command", "", "the command that ran the fault tests, shown on the page")
	haExpect := fs.String("ha-expect", "", "comma-separated scenarios that must be in the run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ha != "" {
		return runHA(*ha, *haDoc, *haCmd, *haExpect, stderr)
	}
	names := strings.FieldsFunc(*only, func(r rune) bool { return r == ' ' || r == ',' })
	for _, a := range names {
		if _, ok := allAreas[a]; !ok {
			return fmt.Errorf("unknown area %q", a)
		}
	}
	written, err := WritePages(*in, *docs, *results, names, time.Now())
	for _, p := range written {
		fmt.Fprintf(stderr, "wrote %s\n", p)
	}
	return err
}

// runHA writes the fault scenarios page and fails when anything on it is
// flagged (after writing it, so the page shows what went wrong).
func runHA(in, doc, command, expect string, stderr io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var want []string
	if expect != "" {
		want = strings.Split(expect, ",")
	}
	flags, err := renderHA(f, doc, want, haMeta{Command: command, Date: time.Now(), Machine: haMachine()})
	if err != nil {
		return err
	}
	if len(flags) > 0 {
		fmt.Fprintf(stderr, "%s flags:\n  %s\n", doc, strings.Join(flags, "\n  "))
		return fmt.Errorf("%d fault scenario findings", len(flags))
	}
	return nil
}
