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
	fmt.Fprintln(w, "| benchmark | time/op | B/op | allocs/op | other | baseline | baseline time/op | baseline ÷ ours |")
	fmt.Fprintln(w, "|---|--:|--:|--:|---|---|--:|--:|")
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

// demote shifts every markdown heading outside code fences down one level,
// so an area document's "# Title" becomes a section of the combined page.
func demote(doc string) string {
	var b strings.Builder
	fence := false
	for _, line := range strings.SplitAfter(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(line, "#") {
			line = "#" + line
		}
		b.WriteString(line)
	}
	return b.String()
}

// readDoc returns an area document, or "" when it does not exist.
func readDoc(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// section writes an area: its document with the measured tables at the
// marker (or after it), then the benchstat text.
func section(w io.Writer, title, doc string, tables func(io.Writer), benchstat string) {
	var t strings.Builder
	fmt.Fprintf(&t, "\n#### Measured\n\n")
	tables(&t)
	if benchstat != "" {
		fmt.Fprintf(&t, "\n<details><summary>benchstat</summary>\n\n```\n%s```\n</details>\n", benchstat)
	}
	fmt.Fprintf(w, "\n## %s\n\n", title)
	doc = demote(strings.TrimSpace(doc))
	if lines := strings.SplitN(doc, "\n", 2); len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		// The document's own title repeats the section title: drop it.
		doc = ""
		if len(lines) == 2 {
			doc = strings.TrimSpace(lines[1])
		}
	}
	if doc == "" {
		fmt.Fprint(w, t.String())
		return
	}
	if strings.Contains(doc, marker) {
		fmt.Fprintln(w, strings.Replace(doc, marker, t.String(), 1))
		return
	}
	fmt.Fprintln(w, doc)
	fmt.Fprint(w, t.String())
}

// loadTable renders a shed (ceiling proof) result.
func loadTable(w io.Writer, name string, r *loadResult) {
	if r == nil {
		fmt.Fprintf(w, "_No %s result in this run._\n", name)
		return
	}
	verdict := "all checks passed"
	if !r.Passed {
		verdict = "**checks failed**"
	}
	fmt.Fprintf(w, "`%s` (%s run, %.0f s, %s)\n\n", name, r.Mode, r.Seconds, verdict)
	fmt.Fprintln(w, "| figure | value | target |")
	fmt.Fprintln(w, "|---|--:|---|")
	if f := r.Fill; f != nil {
		fmt.Fprintf(w, "| listings filled | %d in %.1f s | %d (ceiling) |\n", f.Listings.Admitted, f.Listings.Seconds, r.Ceilings["listings"])
		fmt.Fprintf(w, "| presence bindings live | %d in %.1f s | %d |\n", f.Presence.Admitted, f.Presence.Seconds, r.Ceilings["presence"])
		fmt.Fprintf(w, "| attempts filled | %d in %.1f s | %d (ceiling) |\n", f.Attempts.Admitted, f.Attempts.Seconds, r.Ceilings["attempts"])
		fmt.Fprintf(w, "| whole fill | %.1f s | well under a minute |\n", f.TotalSeconds)
		if f.RSSMiB > 0 {
			fmt.Fprintf(w, "| server RSS at full fill | %.1f MiB | < 128 MiB |\n", f.RSSMiB)
		}
	}
	if s := r.Shed; s != nil {
		fmt.Fprintf(w, "| over-ceiling requests at %.1f× | %d | |\n", s.Overload, s.OfferedOverCeiling)
		fmt.Fprintf(w, "| typed shed answers | %d (%.3f %%) | 100 %% |\n", s.TypedShed, s.TypedPct)
		fmt.Fprintf(w, "| admitted listings lost | %d (sampled GETs %d/%d failed; %d enumerated) | 0 |\n", s.Lost, s.LostSampled, s.Sampled, s.Enumerated)
		fmt.Fprintf(w, "| accepted work failed | %d | 0 |\n", s.AcceptedFailed)
		fmt.Fprintf(w, "| shed answer time p50 / p99 / max (from sending) | %.3f / **%.3f** / %.3f ms | p99 < 5 ms |\n", s.AnswerP50ms, s.AnswerP99ms, s.AnswerMaxMs)
		fmt.Fprintf(w, "| shed latency p50 / p99 / max (open loop, from the intended start) | %.3f / %.3f / %.3f ms | |\n", s.ShedP50ms, s.ShedP99ms, s.ShedMaxMs)
	}
	if c := r.ServerCPU; c != nil {
		fmt.Fprintf(w, "| server CPU per answer (%s) | %.1f µs over %d answers | |\n", c.Phase, c.MicrosPerAns, c.Answers)
	}
	for _, c := range r.Checks {
		if !c.OK {
			fmt.Fprintf(w, "\nFAILED `%s`: %s\n", c.Name, c.Detail)
		}
	}
}

// rateLine renders a udprate result in one sentence.
func rateLine(w io.Writer, r *loadResult) {
	if r == nil || r.UDPRate == nil {
		fmt.Fprintln(w, "_No UDP rate result in this run._")
		return
	}
	u := r.UDPRate
	fmt.Fprintf(w, "UDP %s rate (`rendezvous-load --mode udprate`, %d sockets × %d in flight, %.0f s): **%.0f answered/s**, %d lost, server CPU **%.2f µs per answer**.\n",
		u.Kind, u.Sockets, u.Window, u.Seconds, u.PerSecond, u.Lost, u.CPUPerAnswer)
}

// compareTable renders the coturn comparison; oursPlain (may be nil) is our
// plain Binding rate from the same run.
func compareTable(w io.Writer, ours, coturn, oursPlain *loadResult) {
	if ours == nil || coturn == nil || ours.UDPRate == nil || coturn.UDPRate == nil {
		fmt.Fprintln(w, "_coturn comparison not measured: run `make bench-compare` (needs `turnserver`, e.g. `apt-get install coturn`)._")
		return
	}
	o, c := ours.UDPRate, coturn.UDPRate
	fmt.Fprintf(w, "coturn comparison (`make bench-compare`, measured %s; same generator, %d sockets × %d in flight, one server at a time, servers pinned to one core and the generator to the other):\n\n",
		ours.Started.UTC().Format("2006-01-02 15:04 UTC"), o.Sockets, o.Window)
	fmt.Fprintln(w, "| server | request | answered/s | lost | server CPU µs/answer |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|")
	fmt.Fprintf(w, "| rendezvous | authenticated presence refresh | %.0f | %d | %.2f |\n", o.PerSecond, o.Lost, o.CPUPerAnswer)
	if oursPlain != nil && oursPlain.UDPRate != nil {
		p := oursPlain.UDPRate
		fmt.Fprintf(w, "| rendezvous | plain Binding | %.0f | %d | %.2f |\n", p.PerSecond, p.Lost, p.CPUPerAnswer)
	}
	fmt.Fprintf(w, "| coturn | plain Binding | %.0f | %d | %.2f |\n", c.PerSecond, c.Lost, c.CPUPerAnswer)
	if c.PerSecond > 0 {
		fmt.Fprintf(w, "\nRate ratio rendezvous ÷ coturn: **%.2f** (expected ≥ 1.0).", o.PerSecond/c.PerSecond)
	}
	if o.CPUPerAnswer > 0 && c.CPUPerAnswer > 0 {
		fmt.Fprintf(w, " CPU per answer coturn ÷ rendezvous: **%.2f**.", c.CPUPerAnswer/o.CPUPerAnswer)
	}
	fmt.Fprintln(w)
}
