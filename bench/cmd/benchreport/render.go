package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// marker in an area document is replaced by the measured tables; without
// it the tables follow the document. Other HTML comments (such as baseline
// declarations, see Overrides) stay in the page, invisible.
const marker = "<!-- results -->"

// fmtVal prints v with three significant digits and a thousands-friendly form.
func fmtVal(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case a >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// fmtRatio keeps two decimals around 1 and two significant digits for
// small ratios, so a 0.003× never reads as 0.00×.
func fmtRatio(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func fmtSpread(s Stat) string {
	if s.N < 2 {
		return ""
	}
	return fmt.Sprintf("±%.0f%%", 100*s.Spread)
}

// Table renders one area's samples as a markdown table with each
// benchmark's baseline and the time ratio baseline ÷ ours (>1: ours faster).
func Table(w io.Writer, run *Run, o Overrides) {
	if len(run.Samples) == 0 {
		fmt.Fprintln(w, "_No benchmark results for this area in this run._")
		return
	}
	tableHead(w, "lrrrllrr", "benchmark", "time/op", "B/op", "allocs/op", "other", "baseline", "baseline time/op", "baseline ÷ ours")
	for _, s := range run.Samples {
		t := summarize(s.Values["ns/op"])
		var other []string
		for _, u := range s.Units {
			if u == "ns/op" || u == "B/op" || u == "allocs/op" {
				continue
			}
			st := summarize(s.Values[u])
			other = append(other, fmt.Sprintf("%s %s", fmtVal(st.Median), u))
		}
		row := fmt.Sprintf("| `%s` | %s ns %s | %s | %s | %s |", shortName(s), fmtVal(t.Median), fmtSpread(t),
			fmtVal(summarize(s.Values["B/op"]).Median), fmtVal(summarize(s.Values["allocs/op"]).Median), strings.Join(other, ", "))
		if b := o.Baseline(s, run.Samples); b != nil {
			bt := summarize(b.Values["ns/op"])
			ratio := ""
			if t.Median > 0 {
				ratio = "**" + fmtRatio(bt.Median/t.Median) + "×**"
			}
			// CPU-per-answer metrics are what the UDP claims are made on:
			// give their ratio too (baseline ÷ ours, above 1: ours cheaper).
			for _, u := range s.Units {
				if strings.Contains(u, "cpu") && len(b.Values[u]) > 0 {
					if o := summarize(s.Values[u]).Median; o > 0 {
						ratio += fmt.Sprintf(", %s **%s×**", u, fmtRatio(summarize(b.Values[u]).Median/o))
					}
				}
			}
			row += fmt.Sprintf(" `%s` | %s ns | %s |", shortName(b), fmtVal(bt.Median), ratio)
		} else {
			row += " | | |"
		}
		fmt.Fprintln(w, row)
	}
}

// shortName drops the module prefix of the package.
func shortName(s *Sample) string {
	pkg := s.Pkg
	if i := strings.LastIndex(pkg, "/rendezvous/"); i >= 0 {
		pkg = pkg[i+len("/rendezvous/"):]
	}
	if pkg == "" {
		return s.Name
	}
	return pkg + " " + s.Name
}

// readDoc returns an area document, or "" when it does not exist.
func readDoc(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}
