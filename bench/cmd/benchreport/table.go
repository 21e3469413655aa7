package main

import (
	"fmt"
	"io"
	"strings"
)

// Pieces the generated pages' tables and lists have in common.

// tableHead writes a Markdown table's header row, cols, and the row under
// it that aligns each column: align has one letter a column, l for text
// (left) and r for figures (right).
func tableHead(w io.Writer, align string, cols ...string) {
	if len(align) != len(cols) {
		panic(fmt.Sprintf("tableHead: %d alignments for %d columns", len(align), len(cols)))
	}
	sep := "|"
	for _, a := range align {
		if a == 'r' {
			sep += "--:|"
		} else {
			sep += "---|"
		}
	}
	fmt.Fprintf(w, "| %s |\n%s\n", strings.Join(cols, " | "), sep)
}

// measured opens a table's section with a blank line and, when it has no
// rows (n is 0), says that what was not measured in this run; it tells
// whether there is a table to write.
func measured(w io.Writer, n int, what string) bool {
	fmt.Fprintln(w)
	if n == 0 {
		fmt.Fprintf(w, "_%s not measured in this run._\n", what)
		return false
	}
	return true
}

// subBenchmarks are run's samples of the sub-benchmarks named prefix<sub>,
// by sub (none for a nil run).
func subBenchmarks(run *Run, prefix string) map[string]*Sample {
	bySub := map[string]*Sample{}
	if run == nil {
		return bySub
	}
	for _, s := range run.Samples {
		if sub, ok := strings.CutPrefix(s.Name, prefix); ok {
			bySub[sub] = s
		}
	}
	return bySub
}

// callCells are the two cells a Redis store call's row starts with: the
// client's time per call (median and spread) and the Redis server's CPU
// per call.
func callCells(s *Sample) string {
	t := summarize(s.Values["ns/op"])
	return fmt.Sprintf("%s µs %s | %s µs", fmtVal(t.Median/1e3), fmtSpread(t), fmtVal(summarize(s.Values["redis-us/op"]).Median))
}

// bullets writes title, a blank line and a Markdown list of items.
func bullets(w io.Writer, title string, items []string) {
	fmt.Fprintln(w, title)
	fmt.Fprintln(w)
	for _, it := range items {
		fmt.Fprintf(w, "- %s\n", it)
	}
}
