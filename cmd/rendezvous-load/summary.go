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
	if len(res.CPUSteps) > 0 {
		fmt.Fprintf(w, "\nserver CPU per answer by kind and offered rate (each kind alone; the baseline's share removed)\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "kind\toffered/s\tanswered/s\tanswers\terrors\tserver CPU s\tµs/answer\t")
		for _, c := range res.CPUSteps {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%d\t%d\t%.3f\t%.1f\t\n", c.Kind, c.OfferedPerS, c.AnsweredPerS, c.Answers, c.Errors, c.CPUSeconds, c.MicrosPerAns)
		}
		tw.Flush()
	}
	if s := res.Soak; s != nil {
		writeSoakSummary(w, s)
	}
	if c := res.Cleanup; c != nil {
		fmt.Fprintf(w, "cleanup: %d of %d listings the run created deleted, %d already gone, %d left, in %.1fs\n", c.Deleted, c.Owned, c.AlreadyGone, c.Failed, c.Seconds)
	}
	fmt.Fprintln(w)
	for _, c := range res.Checks {
		fmt.Fprintf(w, "%s %-18s %s\n", c.Mark(), c.Name, c.Detail)
	}
	fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
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

// writeSoakSummary prints the soak's figures in the shape of the
// reliability record: resources at start, end and maximum, answers by
// outcome, and the listings lost.
func writeSoakSummary(w io.Writer, s *SoakSummary) {
	fmt.Fprintf(w, "\nsoak %.0fs, %d samples of the server\n", s.Seconds, len(s.Samples))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "resource\tstart\tend\tmax\twarm-up max\tlast-quarter max\tallowance\tgrowth\t")
	for _, g := range s.Growth {
		verdict := "bounded"
		switch {
		case g.Incomplete:
			verdict = "too few samples"
		case g.Unbounded:
			verdict = "UNBOUNDED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", g.Resource, fmtResource(g.Resource, g.Start), fmtResource(g.Resource, g.End),
			fmtResource(g.Resource, g.Max), fmtResource(g.Resource, g.WarmupMax), fmtResource(g.Resource, g.LastQMax),
			fmtResource(g.Resource, g.Allowance), verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "fds do not count the load tester's own HTTP connections (its pool opens up to --conns as the load varies)\n")
	fmt.Fprintf(w, "answers: %d requests, by outcome %v; untyped: %d HTTP (%d not problem+json), %d UDP\n", s.Requests, s.Answers, s.UntypedHTTP, s.NotProblem, s.BadUDP)
	fmt.Fprintf(w, "listings: created %d and deleted %d during the soak; %d expected at the end, %d lost\n", s.Created, s.Deleted, s.Expected, s.Lost)
	if s.SampleError != "" {
		fmt.Fprintf(w, "last sampling error: %s\n", s.SampleError)
	}
}
