package main

import (
	"fmt"
	"sort"
)

// The soak's rule for "grows without bound", applied to each resource
// sampled over the soak phase (RSS, fds other than the tester's own HTTP
// connections, goroutines). The phase's first quarter is the warm-up; the
// reference is the maximum of its second half (the phase's second eighth),
// so what the soak's own start-up leaves behind does not set it (the
// settle phase before it waits out the setup's). A resource grows without
// bound when both
//
//   - the line fitted to the samples of the second half (Theil-Sen: its
//     slope is the median of the slopes between every two samples, so one
//     outlier does not tilt it) rises, across that half, by more than the
//     allowance, and
//   - the maximum of the last quarter exceeds the warm-up maximum by more
//     than the allowance,
//
// where the allowance is max(--max-growth × warm-up maximum, the resource's
// floor). Requiring both keeps one spike (a GC cycle, a burst of
// connections) from failing a run while a steady leak still fails it: a
// leak rises through the second half and ends above the warm-up.

// growthFloors are the smallest allowances: below them a change is noise
// (heap sizing, the tester's keep-alive connections, timers).
var growthFloors = map[string]float64{"rss_bytes": 16 << 20, "fds": 16, "goroutines": 32}

// GrowthCheck is one resource's figures under the rule above.
type GrowthCheck struct {
	Resource   string  `json:"resource"`
	Start      float64 `json:"start"`
	End        float64 `json:"end"`
	Max        float64 `json:"max"`
	WarmupMax  float64 `json:"warmup_max"` // the reference: maximum of the warm-up's second half
	LastQMax   float64 `json:"last_quarter_max"`
	TrendRise  float64 `json:"second_half_trend_rise"`
	Allowance  float64 `json:"allowance"`
	Unbounded  bool    `json:"unbounded"`
	Samples    int     `json:"samples"`
	Incomplete bool    `json:"incomplete,omitempty"` // too few samples in a quarter to judge
}

// growth applies the rule to samples (t in seconds from the phase start,
// v the values) of a phase lasting d seconds.
func growth(resource string, t, v []float64, d, maxGrowth float64) GrowthCheck {
	g := GrowthCheck{Resource: resource, Samples: len(v)}
	if len(v) == 0 {
		g.Incomplete = true
		return g
	}
	g.Start, g.End = v[0], v[len(v)-1]
	var warm, lastQ, ht, hv []float64
	for i, ti := range t {
		g.Max = max(g.Max, v[i])
		switch {
		case ti >= d/8 && ti <= d/4:
			warm = append(warm, v[i])
		case ti >= 3*d/4:
			lastQ = append(lastQ, v[i])
		}
		if ti >= d/2 {
			ht, hv = append(ht, ti), append(hv, v[i])
		}
	}
	if len(warm) < 2 || len(lastQ) < 2 || len(hv) < 3 {
		g.Incomplete = true
		return g
	}
	g.WarmupMax, g.LastQMax = maxOf(warm), maxOf(lastQ)
	g.TrendRise = theilSen(ht, hv) * (ht[len(ht)-1] - ht[0])
	g.Allowance = max(maxGrowth*g.WarmupMax, growthFloors[resource])
	g.Unbounded = g.TrendRise > g.Allowance && g.LastQMax-g.WarmupMax > g.Allowance
	return g
}

// Detail describes the figures for the check's line.
func (g GrowthCheck) Detail() string {
	if g.Incomplete {
		return fmt.Sprintf("%d samples: too few in the warm-up, second half or last quarter to judge", g.Samples)
	}
	return fmt.Sprintf("start %s, end %s, max %s; warm-up max %s, last-quarter max %s, second-half trend %+.3g (allowance %s)",
		fmtResource(g.Resource, g.Start), fmtResource(g.Resource, g.End), fmtResource(g.Resource, g.Max),
		fmtResource(g.Resource, g.WarmupMax), fmtResource(g.Resource, g.LastQMax), scaled(g.Resource, g.TrendRise),
		fmtResource(g.Resource, g.Allowance))
}

func scaled(resource string, v float64) float64 {
	if resource == "rss_bytes" {
		return v / (1 << 20)
	}
	return v
}

func fmtResource(resource string, v float64) string {
	if resource == "rss_bytes" {
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	}
	return fmt.Sprintf("%.0f", v)
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// theilSen is the median of the slopes between every two samples with
// different times (0 when there are none). Over 1,000 samples, every k-th
// is used, so the pairs stay under half a million.
func theilSen(t, v []float64) float64 {
	step := len(t)/1000 + 1
	var slopes []float64
	for i := 0; i < len(t); i += step {
		for j := i + step; j < len(t); j += step {
			if dt := t[j] - t[i]; dt != 0 {
				slopes = append(slopes, (v[j]-v[i])/dt)
			}
		}
	}
	if len(slopes) == 0 {
		return 0
	}
	sort.Float64s(slopes)
	m := len(slopes) / 2
	if len(slopes)%2 == 0 {
		return (slopes[m-1] + slopes[m]) / 2
	}
	return slopes[m]
}
