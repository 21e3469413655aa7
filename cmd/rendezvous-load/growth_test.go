package main

import (
	"math"
	"testing"
)

// The growth rule: a steady leak fails, a flat series with noise, a
// one-off spike, a rise confined to the warm-up and a sawtooth pass.
func TestGrowthRule(t *testing.T) {
	const d, n = 120.0, 60
	series := func(f func(t float64) float64) ([]float64, []float64) {
		var ts, vs []float64
		for i := 0; i <= n; i++ {
			x := d * float64(i) / n
			ts, vs = append(ts, x), append(vs, f(x))
		}
		return ts, vs
	}
	f := func(name string, resource string, want bool, fn func(t float64) float64) {
		t.Helper()
		ts, vs := series(fn)
		g := growth(resource, ts, vs, d, 0.10)
		if g.Incomplete || g.Unbounded != want {
			t.Fatalf("%s: unbounded %v (incomplete %v), want %v: %s", name, g.Unbounded, g.Incomplete, want, g.Detail())
		}
	}
	f("goroutine leak", "goroutines", true, func(t float64) float64 { return 70 + t })
	f("fd leak", "fds", true, func(t float64) float64 { return 80 + t/2 })
	f("RSS leak", "rss_bytes", true, func(t float64) float64 { return 20<<20 + t*(1<<20) })
	f("flat", "goroutines", false, func(t float64) float64 { return 70 + 3*math.Sin(t) })
	f("warm-up rise", "rss_bytes", false, func(t float64) float64 { return 10<<20 + min(t, 30)*(2<<20) })
	f("sawtooth", "rss_bytes", false, func(t float64) float64 { return 30<<20 + math.Mod(t, 20)*(1<<20) })
	f("one spike at the end", "fds", false, func(t float64) float64 {
		if t == d {
			return 200
		}
		return 80
	})
	f("slow growth within the allowance", "goroutines", false, func(t float64) float64 { return 70 + t/10 })

	g := growth("fds", []float64{0, 1, 2}, []float64{1, 2, 3}, 120, 0.1)
	if !g.Incomplete {
		t.Fatalf("three samples in the first seconds judged: %+v", g)
	}
	if s := theilSen([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 6, 8, 100}); s != 2 {
		t.Fatalf("theilSen = %v, want 2 (the outlier ignored)", s)
	}
}

// The fds judged are the server's beyond the tester's own connections: a
// pool that opens more connections as the load varies is not a leak, fds
// that rise while the pool stays put are.
func TestGrowthDiscountsTesterConns(t *testing.T) {
	f := func(connsGrow bool, want string) {
		t.Helper()
		s := &SoakSummary{Seconds: 120}
		for i := 0; i <= 60; i++ {
			p := ResourceSample{T: float64(2 * i), RSSBytes: 20 << 20, FDs: 20 + i, TesterConns: 4, Goroutines: 40}
			if connsGrow {
				p.TesterConns = 4 + i
			}
			s.Samples = append(s.Samples, p)
		}
		var res Result
		res.addGrowthChecks(s, 0.1)
		found := false
		for _, c := range res.Checks {
			if c.Name == "soak.fds" {
				found = true
				if c.Mark() != want {
					t.Fatalf("fds rising with the tester's connections %v: %s %s", connsGrow, c.Mark(), c.Detail)
				}
			}
		}
		if !found {
			t.Fatalf("no soak.fds check among %+v", res.Checks)
		}
	}
	f(true, "PASS")
	f(false, "FAIL")
}
