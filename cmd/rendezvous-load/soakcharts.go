package main

import "fmt"

// soakCharts draws the soak's resource samples over the soak phase, one
// chart per resource with its unit: the server's RSS in MiB, its open fds
// beyond the tester's own connections, and its goroutines.
func soakCharts(s *SoakSummary) []*Chart {
	if s == nil || len(s.Samples) == 0 {
		return nil
	}
	t := make([]float64, len(s.Samples))
	rss, fds, gor := make([]float64, len(t)), make([]float64, len(t)), make([]float64, len(t))
	for i, p := range s.Samples {
		t[i], rss[i], fds[i], gor[i] = p.T, float64(p.RSSBytes)/(1<<20), float64(p.FDs-p.TesterConns), float64(p.Goroutines)
	}
	one := func(title, unit, color string, ys []float64) *Chart {
		c := timeChart(title, unit, t, []string{unit}, []string{color}, [][]float64{ys}, nil)
		c.XLabel = "seconds since the soak began"
		return c
	}
	return []*Chart{
		one("Server RSS", "MiB", "#1f77b4", rss),
		one("Server open fds (beyond the tester's connections)", "fds", "#ff7f0e", fds),
		one("Server goroutines", "goroutines", "#2ca02c", gor),
	}
}

// resourceValue formats a growth figure of resource with its unit.
func resourceValue(resource string, v float64) string {
	if resource == "rss_bytes" {
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	}
	return fmt.Sprintf("%.0f", v)
}

// yesNo is how the report shows a flag.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
