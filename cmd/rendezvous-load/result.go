package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/internal/loadresult"
)

// Check is one validation: its name, whether it passed and what was seen.
// A skipped check had nothing to check (e.g. introductions when no bind
// succeeded): it does not fail the run, and it is never reported as a pass.
type Check struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"` // passed or skipped: it does not fail the run
	Skipped bool   `json:"skipped,omitempty"`
	Detail  string `json:"detail"`
}

// Mark is how the summary and the report show the check: PASS, SKIP or FAIL.
func (c Check) Mark() string {
	switch {
	case c.Skipped:
		return "SKIP"
	case c.OK:
		return "PASS"
	}
	return "FAIL"
}

// addCheck appends a Check whose Detail is format applied to args.
func (res *Result) addCheck(name string, ok bool, format string, args ...any) {
	res.Checks = append(res.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// skipCheck appends a check that had nothing to check, saying why.
func (res *Result) skipCheck(name string, format string, args ...any) {
	res.Checks = append(res.Checks, Check{Name: name, OK: true, Skipped: true, Detail: fmt.Sprintf(format, args...)})
}

// decide sets Passed and Verdict from the checks: the verdict names every
// failed and every skipped check, so a pass with nothing checked is visible.
func (res *Result) decide() {
	var passed int
	var failed, skipped []string
	for _, c := range res.Checks {
		switch c.Mark() {
		case "PASS":
			passed++
		case "SKIP":
			skipped = append(skipped, c.Name)
		default:
			failed = append(failed, c.Name)
		}
	}
	res.Passed = len(failed) == 0 && passed > 0
	switch {
	case len(failed) > 0:
		res.Verdict = fmt.Sprintf("FAIL: %d of %d checks failed (%s)", len(failed), len(res.Checks), strings.Join(failed, ", "))
	case passed == 0:
		res.Verdict = "FAIL: no check had anything to check"
	default:
		res.Verdict = fmt.Sprintf("PASS: %d checks passed", passed)
	}
	if len(skipped) > 0 {
		res.Verdict += fmt.Sprintf("; %d skipped with nothing to check (%s)", len(skipped), strings.Join(skipped, ", "))
	}
}

// KindSummary is one kind's totals and latencies in one phase.
type KindSummary struct {
	Kind      string            `json:"kind"`
	Sent      uint64            `json:"sent"`
	OK        uint64            `json:"ok"`
	Shed      uint64            `json:"shed"`
	Errors    uint64            `json:"errors"`
	Late      uint64            `json:"late"`
	Codes     map[string]uint64 `json:"codes"`
	RatePerS  float64           `json:"rate_per_s"`
	P50ms     float64           `json:"p50_ms"`
	P90ms     float64           `json:"p90_ms"`
	P99ms     float64           `json:"p99_ms"`
	MaxMs     float64           `json:"max_ms"`
	ShedP99ms float64           `json:"shed_p99_ms,omitempty"`
	Hist      []HistBucket      `json:"histogram"`
}

// HistBucket is one non-empty latency bucket: count samples below LeMs.
type HistBucket struct {
	LeMs  float64 `json:"le_ms"`
	Count uint64  `json:"count"`
}

// PhaseSummary is one phase's per-kind table.
type PhaseSummary struct {
	Name    string        `json:"name"`
	Seconds float64       `json:"seconds"`
	Kinds   []KindSummary `json:"kinds"`
}

// FillSummary is the fill phase's figures (shed mode, or load mode setup).
type FillSummary struct {
	Listings     fillResult   `json:"listings"`
	Presence     fillResult   `json:"presence"`
	Attempts     fillResult   `json:"attempts"`
	TotalSeconds float64      `json:"total_seconds"`
	UsageAtFull  *ServerUsage `json:"server_at_full,omitempty"`
	RSSMiB       float64      `json:"server_rss_mib,omitempty"`
}

// Result is the whole run, written as result.json and drawn as report.html.
type Result struct {
	Mode      string              `json:"mode"`
	RunID     string              `json:"run_id"`
	Started   time.Time           `json:"started"`
	Seconds   float64             `json:"seconds"`
	HTTP      string              `json:"http"`
	Mediator  string              `json:"mediator"`
	Ceilings  map[string]int      `json:"ceilings,omitempty"`
	Config    *Config             `json:"config"`
	Fill      *FillSummary        `json:"fill,omitempty"`
	Shed      *loadresult.Shed    `json:"shed,omitempty"`
	Phases    []PhaseSummary      `json:"phases"`
	Timeline  []Phase             `json:"timeline"`
	Series    []SeriesPoint       `json:"series"`
	ServerCPU *CPUSummary         `json:"server_cpu,omitempty"`
	UDPRate   *loadresult.UDPRate `json:"udp_rate,omitempty"`
	Cleanup   *CleanupSummary     `json:"cleanup,omitempty"`
	Soak      *SoakSummary        `json:"soak,omitempty"`
	CPUSteps  []CPUStep           `json:"cpu_steps,omitempty"`
	Relay     *RelaySummary       `json:"relay,omitempty"`
	Checks    []Check             `json:"checks"`
	Passed    bool                `json:"passed"`
	Verdict   string              `json:"verdict"`
}

// CPUSummary is the server's CPU time per answered request over the
// measured phase: the figure that carries over to other hardware.
type CPUSummary struct {
	Phase        string  `json:"phase"`
	CPUSeconds   float64 `json:"cpu_seconds"`
	Answers      uint64  `json:"answers"`
	MicrosPerAns float64 `json:"cpu_us_per_answer"`
}

// summarize turns one phase's Recorder into its table.
func summarize(name string, seconds float64, rec *Recorder) PhaseSummary {
	ps := PhaseSummary{Name: name, Seconds: seconds}
	var c Counts
	rec.Load(&c)
	for k := Kind(0); k < numKinds; k++ {
		if c.Total(k) == 0 && c.Late[k] == 0 {
			continue
		}
		ks := KindSummary{Kind: k.String(), Sent: c.Total(k), OK: c.Class(k, ClassOK),
			Shed: c.Class(k, ClassShed), Errors: c.Class(k, ClassError), Late: c.Late[k], Codes: map[string]uint64{}}
		for i, v := range c.ByCode[k] {
			if v > 0 {
				ks.Codes[Code(i).String()] = v
			}
		}
		if seconds > 0 {
			ks.RatePerS = float64(ks.Sent) / seconds
		}
		var h, sh HistSnapshot
		rec.KindHist(k, 0, true, &h)
		rec.KindHist(k, ClassShed, false, &sh)
		ks.P50ms, ks.P90ms, ks.P99ms, ks.MaxMs = ms(h.Quantile(.5)), ms(h.Quantile(.9)), ms(h.Quantile(.99)), ms(h.Max())
		if sh.Total > 0 {
			ks.ShedP99ms = ms(sh.Quantile(.99))
		}
		ks.Hist = compactHist(&h)
		ps.Kinds = append(ps.Kinds, ks)
	}
	return ps
}

// compactHist lists non-empty buckets, merging to at most ~4 per octave
// so the JSON stays small.
func compactHist(h *HistSnapshot) []HistBucket {
	var out []HistBucket
	const merge = histSub / 4
	for i := 0; i < histBuckets; i += merge {
		var n uint64
		for j := i; j < i+merge && j < histBuckets; j++ {
			n += h.Counts[j]
		}
		if n > 0 {
			out = append(out, HistBucket{LeMs: float64(bucketHigh(min(i+merge, histBuckets)-1)) / 1e6, Count: n})
		}
	}
	return out
}
