package main

import (
	"strings"
	"testing"
)

// TestSoakReportCharts: the soak report charts the server's RSS, fds and
// goroutines with their units and gives the growth table in units (MiB,
// yes/no), never raw byte counts or Go booleans.
func TestSoakReportCharts(t *testing.T) {
	s := &SoakSummary{Seconds: 60}
	for i := range 20 {
		s.Samples = append(s.Samples, ResourceSample{T: float64(i * 3), RSSBytes: 29970432 + uint64(i)<<16, FDs: 40 + i%3, TesterConns: 8, Goroutines: 30 + i%2})
	}
	res := &Result{Mode: ModeSoak, Soak: s}
	res.addGrowthChecks(s, 0.1)
	var b strings.Builder
	if err := writeHTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"Server RSS", "Server open fds (beyond the tester&#39;s connections)", "Server goroutines", "28.6 MiB", "<td>no</td>", "seconds since the soak began"} {
		if !strings.Contains(page, want) {
			t.Fatalf("report lacks %q", want)
		}
	}
	for _, raw := range []string{"29970432.0", ">false<", ">true<"} {
		if strings.Contains(page, raw) {
			t.Fatalf("report prints a raw value %q", raw)
		}
	}
}
