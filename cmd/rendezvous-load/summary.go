package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// writeSummary prints the end-of-run tables: fill figures, one table per
// phase, the shed figures and every check.
func writeSummary(w io.Writer, res *Result) {
	fmt.Fprintf(w, "\nrendezvous-load %s run %s: %.1fs against %s (mediator %s)\n", res.Mode, res.RunID, res.Seconds, res.HTTP, res.Mediator)
	if f := res.Fill; f != nil {
		fmt.Fprintf(w, "fill: %d listings in %.1fs, %d presence in %.1fs, %d attempts in %.1fs; total %.1fs",
			f.Listings.Admitted, f.Listings.Seconds, f.Presence.Admitted, f.Presence.Seconds, f.Attempts.Admitted, f.Attempts.Seconds, f.TotalSeconds)
		if f.UsageAtFull != nil {
			fmt.Fprintf(w, "; server RSS %.1f MiB", f.RSSMiB)
		}
		fmt.Fprintln(w)
	}
	for _, p := range res.Phases {
		fmt.Fprintf(w, "\nphase %s (%.1fs)\n", p.Name, p.Seconds)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "kind\tsent\trate/s\tok\tshed\terrors\tlate\tp50 ms\tp90 ms\tp99 ms\tmax ms\tshed p99 ms\t")
		for _, k := range p.Kinds {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n",
				k.Kind, k.Sent, k.RatePerS, k.OK, k.Shed, k.Errors, k.Late, k.P50ms, k.P90ms, k.P99ms, k.MaxMs, k.ShedP99ms)
		}
		tw.Flush()
	}
	if s := res.Shed; s != nil {
		fmt.Fprintf(w, "\nshed at %.1fx: %d/%d over-ceiling requests typed (%.3f%%); shed answer time p50 %.3f ms p99 %.3f ms (open loop p99 %.3f ms); lost %d (sampled GETs failed %d/%d, enumerated %d)\n",
			s.Overload, s.TypedShed, s.OfferedOverCeiling, s.TypedPct, s.AnswerP50ms, s.AnswerP99ms, s.ShedP99ms, s.Lost, s.LostSampled, s.Sampled, s.Enumerated)
	}
	if c := res.ServerCPU; c != nil {
		fmt.Fprintf(w, "server CPU over %s: %.2fs for %d answers = %.1f µs per answer\n", c.Phase, c.CPUSeconds, c.Answers, c.MicrosPerAns)
	}
	fmt.Fprintln(w)
	for _, c := range res.Checks {
		mark := "PASS"
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %-18s %s\n", mark, c.Name, c.Detail)
	}
}

// writeOutputs writes result.json and report.html into dir.
func writeOutputs(dir string, res *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cannot create output directory: %w", err)
	}
	data, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		return fmt.Errorf("cannot encode result: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), data, 0o644); err != nil {
		return fmt.Errorf("cannot write result.json: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		return fmt.Errorf("cannot write report.html: %w", err)
	}
	if err := writeHTML(f, res); err != nil {
		f.Close()
		return fmt.Errorf("cannot render report.html: %w", err)
	}
	return f.Close()
}
