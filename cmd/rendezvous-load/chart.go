package main

import (
	"fmt"
	"math"
	"strings"
)

// SVG chart geometry, computed in Go so the template only places shapes.

var kindColors = [numKinds]string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#17becf", "#bcbd22", "#393b79", "#ad494a"}

const (
	chartW, chartH = 760, 260
	padL, padR     = 60, 130
	padT, padB     = 20, 36
)

type chartLine struct {
	Name, Color, Points string
	LegendY             float64
}

type chartTick struct {
	Pos   float64
	Label string
}

type chartBand struct {
	X, W    float64
	Name    string
	Shade   bool
	LabelX  float64
	LabelY  float64
	LabelOn bool
}

type chartBar struct {
	X, Y, W, H float64
	Title      string
}

// Chart is one SVG chart: lines or bars over axes.
type Chart struct {
	Title         string
	W, H          int
	PlotX, PlotY  float64
	PlotW, PlotH  float64
	Lines         []chartLine
	Bars          []chartBar
	BarColor      string
	XTicks        []chartTick
	YTicks        []chartTick
	Bands         []chartBand
	XLabel        string
	YLabel        string
	LegendX       float64
	Empty         bool
	EmptyMessage  string
	AxisBottom    float64
	AxisRightEdge float64
}

func newChart(title, xl, yl string) *Chart {
	return &Chart{Title: title, W: chartW, H: chartH, PlotX: padL, PlotY: padT,
		PlotW: chartW - padL - padR, PlotH: chartH - padT - padB, XLabel: xl, YLabel: yl,
		LegendX: chartW - padR + 10, AxisBottom: chartH - padB, AxisRightEdge: chartW - padR}
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.3g", v)
}

// timeChart draws one line per named series over time.
func timeChart(title, yl string, t []float64, names []string, colors []string, ys [][]float64, phases []Phase) *Chart {
	c := newChart(title, "seconds since start", yl)
	if len(t) == 0 {
		c.Empty, c.EmptyMessage = true, "no samples"
		return c
	}
	// The x axis spans the phases shown (or the samples).
	t0, tMax := 0.0, t[len(t)-1]
	if len(phases) > 0 {
		t0 = math.Min(phases[0].Start, t[0])
		tMax = math.Max(tMax, phases[len(phases)-1].End)
	}
	if tMax-t0 < 1 {
		tMax = t0 + 1
	}
	yMax := 0.0
	for _, s := range ys {
		for _, v := range s {
			yMax = math.Max(yMax, v)
		}
	}
	yMax = niceMax(yMax)
	x := func(v float64) float64 { return c.PlotX + (v-t0)/(tMax-t0)*c.PlotW }
	y := func(v float64) float64 { return c.PlotY + c.PlotH - v/yMax*c.PlotH }
	for i, p := range phases {
		b := chartBand{X: x(p.Start), W: math.Max(x(p.End)-x(p.Start), 0.5), Name: p.Name, Shade: i%2 == 0}
		b.LabelX, b.LabelY, b.LabelOn = b.X+3, c.PlotY+12, b.W > 40
		c.Bands = append(c.Bands, b)
	}
	for i, s := range ys {
		var sb strings.Builder
		nonZero := false
		for j, v := range s {
			fmt.Fprintf(&sb, "%.1f,%.1f ", x(t[j]), y(v))
			nonZero = nonZero || v > 0
		}
		if !nonZero {
			continue
		}
		c.Lines = append(c.Lines, chartLine{Name: names[i], Color: colors[i], Points: sb.String(), LegendY: c.PlotY + 14*float64(len(c.Lines)) + 8})
	}
	for i := 0; i <= 4; i++ {
		v := yMax * float64(i) / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: y(v), Label: fmtNum(v)})
		tv := t0 + (tMax-t0)*float64(i)/4
		c.XTicks = append(c.XTicks, chartTick{Pos: x(tv), Label: fmt.Sprintf("%.0f", tv)})
	}
	if len(c.Lines) == 0 {
		c.Empty, c.EmptyMessage = true, "nothing in this series"
	}
	return c
}

// histChart draws a latency histogram on a logarithmic latency axis.
func histChart(title string, color string, buckets []HistBucket) *Chart {
	c := newChart(title, "latency (ms, log scale)", "requests")
	c.BarColor = color
	if len(buckets) == 0 {
		c.Empty, c.EmptyMessage = true, "no samples"
		return c
	}
	lo := math.Log10(math.Max(buckets[0].LeMs/2, 1e-3))
	hi := math.Log10(buckets[len(buckets)-1].LeMs)
	lo, hi = math.Floor(lo), math.Ceil(hi)
	if hi <= lo {
		hi = lo + 1
	}
	var maxN uint64
	for _, b := range buckets {
		maxN = max(maxN, b.Count)
	}
	yMax := niceMax(float64(maxN))
	x := func(ms float64) float64 { return c.PlotX + (math.Log10(ms)-lo)/(hi-lo)*c.PlotW }
	prev := math.Pow(10, lo)
	for i, b := range buckets {
		left := prev
		if i > 0 {
			left = buckets[i-1].LeMs
		} else {
			left = math.Max(b.LeMs/1.19, math.Pow(10, lo))
		}
		h := float64(b.Count) / yMax * c.PlotH
		c.Bars = append(c.Bars, chartBar{X: x(left), W: math.Max(x(b.LeMs)-x(left)-0.5, 0.8), Y: c.PlotY + c.PlotH - h, H: h,
			Title: fmt.Sprintf("≤ %.3f ms: %d", b.LeMs, b.Count)})
	}
	for e := lo; e <= hi; e++ {
		c.XTicks = append(c.XTicks, chartTick{Pos: x(math.Pow(10, e)), Label: fmtNum(math.Pow(10, e))})
	}
	for i := 0; i <= 4; i++ {
		v := yMax * float64(i) / 4
		c.YTicks = append(c.YTicks, chartTick{Pos: c.PlotY + c.PlotH - v/yMax*c.PlotH, Label: fmtNum(v)})
	}
	return c
}

func fmtFixed(v float64, prec int) string { return fmt.Sprintf("%.*f", prec, v) }
