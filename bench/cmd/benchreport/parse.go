package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Sample is every measurement of one benchmark: value lists per unit, in
// the order they were read.
type Sample struct {
	Pkg    string
	Name   string // without the Benchmark prefix and the -GOMAXPROCS suffix
	Values map[string][]float64
	Units  []string // first-seen order
}

// Key identifies a benchmark across packages.
func (s *Sample) Key() string { return s.Pkg + "." + s.Name }

// Run is one parsed `go test -bench` output: the samples and the
// configuration lines (goos, goarch, cpu).
type Run struct {
	Samples []*Sample
	Config  map[string]string
}

// ParseError names the line that is not benchmark output.
type ParseError struct {
	Line   int
	Reason string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Parse reads raw `go test -bench` output. Lines that are neither
// configuration nor results (PASS, ok, logs) are ignored; a result line
// whose fields do not parse is an error.
func Parse(r io.Reader) (*Run, error) {
	run := &Run{Config: map[string]string{}}
	byKey := map[string]*Sample{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, "Benchmark") && !strings.ContainsAny(k, " \t") {
			if k == "pkg" {
				pkg = v
			} else {
				run.Config[k] = v
			}
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			// "BenchmarkX" alone (a parent) or a log line that starts with Benchmark.
			if len(f) == 1 || (len(f) > 1 && !isNumber(f[1])) {
				continue
			}
			return nil, &ParseError{n, fmt.Sprintf("result %q has an odd number of fields", line)}
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // not a result line
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		s := byKey[pkg+"."+name]
		if s == nil {
			s = &Sample{Pkg: pkg, Name: name, Values: map[string][]float64{}}
			byKey[pkg+"."+name] = s
			run.Samples = append(run.Samples, s)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, &ParseError{n, fmt.Sprintf("value %q is not a number", f[i])}
			}
			unit := f[i+1]
			if _, seen := s.Values[unit]; !seen {
				s.Units = append(s.Units, unit)
			}
			s.Values[unit] = append(s.Values[unit], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return run, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// Stat is the summary of one unit's values: the median and the largest
// relative distance of any value from it (a conservative spread).
type Stat struct {
	Median float64
	Spread float64 // fraction, e.g. 0.02 for ±2%
	N      int
}

func summarize(vals []float64) Stat {
	if len(vals) == 0 {
		return Stat{}
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	var med float64
	if len(s)%2 == 1 {
		med = s[len(s)/2]
	} else {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var spread float64
	if med != 0 {
		for _, v := range s {
			d := (v - med) / med
			if d < 0 {
				d = -d
			}
			if d > spread {
				spread = d
			}
		}
	}
	return Stat{Median: med, Spread: spread, N: len(s)}
}
