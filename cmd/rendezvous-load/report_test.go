package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/loadresult"
)

// testResult builds a Result the way a run does, from Recorders.
func testResult() *Result {
	cfg := defaultConfig()
	cfg.Publisher, cfg.Client, cfg.Operator = "SECRET-PUBLISHER-TOKEN", "SECRET-CLIENT-TOKEN", "SECRET-OPERATOR-TOKEN"
	rec := new(Recorder)
	for i := 0; i < 1000; i++ {
		rec.Observe(KindCreate, CodeCapacity, time.Duration(200+i)*time.Microsecond)
		rec.Observe(KindPresence, CodeOK, time.Duration(100+i)*time.Microsecond)
	}
	rec.Observe(KindJoin, CodeNotFound, 3*time.Millisecond)
	res := &Result{Mode: ModeShed, RunID: "abc", Started: time.Unix(0, 0).UTC(), Seconds: 12, HTTP: "127.0.0.1:1", Config: &cfg,
		Timeline: []Phase{{"fill-listings", 0, 2}, {"overload", 2, 12}},
		Checks:   []Check{{Name: "shed.typed", OK: true, Detail: "all typed"}, {Name: "evict.sampled", Detail: "1 lost"}}}
	res.Phases = append(res.Phases, summarize("overload", 10, rec))
	for i := 0; i < 12; i++ {
		var p SeriesPoint
		p.T, p.Phase = float64(i), "overload"
		p.Rate[KindCreate][ClassShed] = 100 * float64(i)
		p.Rate[KindPresence][ClassOK] = 50
		p.P99ms[KindCreate] = 1.5
		res.Series = append(res.Series, p)
	}
	res.Shed = &loadresult.Shed{Overload: 2, OfferedOverCeiling: 1000, TypedShed: 1000, TypedPct: 100}
	res.Fill = &FillSummary{RSSMiB: 70}
	return res
}

func TestOutputsHoldNoSecrets(t *testing.T) {
	dir := t.TempDir()
	res := testResult()
	var summary bytes.Buffer
	writeSummary(&summary, res)
	if err := writeOutputs(dir, res); err != nil {
		t.Fatal(err)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for name, b := range map[string][]byte{"result.json": js, "report.html": html, "summary": summary.Bytes()} {
		if len(b) == 0 {
			t.Fatalf("%s is empty", name)
		}
		if bytes.Contains(b, []byte("SECRET")) {
			t.Fatalf("%s contains a token", name)
		}
	}
	var back Result
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatalf("result.json does not decode: %v", err)
	}
	if back.Shed == nil || back.Shed.TypedShed != 1000 || len(back.Phases) != 1 || len(back.Series) != 12 {
		t.Fatalf("result.json round trip lost data: %+v", back)
	}
	k := back.Phases[0].Kinds
	if len(k) != 3 || k[0].Kind != "create" || k[0].Shed != 1000 || k[0].ShedP99ms < 1.1 || k[0].ShedP99ms > 1.3 || len(k[0].Hist) == 0 {
		t.Fatalf("create summary wrong: %+v", k[0])
	}
	h := string(html)
	for _, want := range []string{"<svg", "<polyline", "Throughput per kind", "Latency, create in overload", "FAIL", "evict.sampled", "Shedding at 2.0"} {
		if !strings.Contains(h, want) {
			t.Fatalf("report.html lacks %q", want)
		}
	}
	for _, want := range []string{"phase overload", "FAIL evict.sampled", "PASS shed.typed", "create"} {
		if !strings.Contains(summary.String(), want) {
			t.Fatalf("summary lacks %q:\n%s", want, summary.String())
		}
	}
}

func TestProgressLine(t *testing.T) {
	var p SeriesPoint
	p.T, p.Phase = 3, "overload"
	p.Rate[KindCreate][ClassShed] = 250
	var c Counts
	c.ByCode[KindCreate][CodeCapacity] = 700
	c.ByCode[KindCreate][CodeTimeout] = 2
	line := formatProgress(&p, &c)
	for _, want := range []string{"overload", "crt 250 e2", "shed 700"} {
		if !strings.Contains(line, want) {
			t.Fatalf("progress line %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "prs") {
		t.Fatalf("progress line shows an idle kind: %q", line)
	}
}

// One progress line fits 180 columns with every kind active, every figure
// at its widest and the longest phase name.
func TestProgressLineWidth(t *testing.T) {
	var p SeriesPoint
	p.T, p.Phase = 86399.9, "fill-attempts"
	var c Counts
	for k := Kind(0); k < numKinds; k++ {
		for cl := Class(0); cl < numClasses; cl++ {
			p.Rate[k][cl] = 1e6 - 1
		}
		c.ByCode[k][CodeOK] = 1<<63 - 1
		c.ByCode[k][CodeCapacity] = 1<<61 - 1
		c.ByCode[k][CodeTimeout] = 987654321987
	}
	line := formatProgress(&p, &c)
	if n := len([]rune(line)); n > progressWidth {
		t.Fatalf("progress line is %d columns, over %d:\n%s", n, progressWidth, line)
	}
	for k := Kind(0); k < numKinds; k++ {
		if !strings.Contains(line, progressNames[k]+" ") {
			t.Fatalf("progress line lacks kind %s: %s", k, line)
		}
	}
	for _, v := range []float64{0, 0.4, 999, 999.6, 1234, 9949, 9951, 99999, 999499, 999501, 1e9, 1.8e19} {
		if s := compact(v); len(s) > 4 {
			t.Fatalf("compact(%g) = %q, over 4 characters", v, s)
		}
	}
	if compact(1234) != "1.2k" || compact(12345) != "12k" || compact(999) != "999" {
		t.Fatalf("compact: %s %s %s", compact(1234), compact(12345), compact(999))
	}
}

func TestMetricsUsage(t *testing.T) {
	u, err := metricsUsage([]byte("# HELP x\nprocess_resident_memory_bytes 7.3400320e+07\nprocess_cpu_seconds_total 12.5\nother 1\n"))
	if err != nil || u.RSSBytes != 73400320 || u.CPUSeconds != 12.5 {
		t.Fatalf("metricsUsage: %+v %v", u, err)
	}
	// The exposition may carry HELP and TYPE lines, labelled series and
	// histogram buckets, and timestamps: only the plain series are read.
	body := []byte("# HELP process_cpu_seconds_total CPU.\n# TYPE process_cpu_seconds_total counter\n" +
		"process_cpu_seconds_total{mode=\"user\"} 99\nprocess_cpu_seconds_total 3.25 1700000000000\n" +
		"# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 2048\n" +
		"http_duration_seconds_bucket{le=\"0.1\"} 7\nprocess_resident_memory_bytes_peak 9e9\n")
	if u, err := metricsUsage(body); err != nil || u.RSSBytes != 2048 || u.CPUSeconds != 3.25 {
		t.Fatalf("metricsUsage with HELP/TYPE, labels and timestamps: %+v %v", u, err)
	}
	if _, err := metricsUsage([]byte("nothing 1\n")); err == nil {
		t.Fatal("metricsUsage without process metrics succeeded")
	}
	if u, err := procUsage(os.Getpid()); err != nil || u.RSSBytes == 0 {
		t.Fatalf("procUsage(self): %+v %v", u, err)
	}
}

func TestReportSubcommand(t *testing.T) {
	dir := t.TempDir()
	if err := writeOutputs(dir, testResult()); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "again.html")
	if code := run([]string{"report", "--in", filepath.Join(dir, "result.json"), "--out", out}, io.Discard, io.Discard, false); code != exitOK {
		t.Fatalf("report exited %d", code)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	b, _ := os.ReadFile(out)
	if len(a) == 0 || string(a) != string(b) {
		t.Fatal("the report rendered from result.json differs from the run's")
	}
	var stderr strings.Builder
	if code := run([]string{"report", "--in", filepath.Join(dir, "missing.json")}, io.Discard, &stderr, false); code != exitUsage || !strings.Contains(stderr.String(), "cannot read result") {
		t.Fatalf("missing input: %d %q", code, stderr.String())
	}
}

// The verdict names every failed and skipped check; a run where nothing
// had anything to check does not pass.
func TestVerdict(t *testing.T) {
	f := func(want string, passed bool, checks ...Check) {
		t.Helper()
		res := &Result{Checks: checks}
		res.decide()
		if res.Verdict != want || res.Passed != passed {
			t.Fatalf("verdict %q (passed %v), want %q (%v)", res.Verdict, res.Passed, want, passed)
		}
	}
	pass := Check{Name: "a", OK: true}
	skip := Check{Name: "b", OK: true, Skipped: true}
	fail := Check{Name: "c"}
	f("PASS: 1 checks passed", true, pass)
	f("PASS: 1 checks passed; 1 skipped with nothing to check (b)", true, pass, skip)
	f("FAIL: 1 of 3 checks failed (c); 1 skipped with nothing to check (b)", false, pass, skip, fail)
	f("FAIL: no check had anything to check; 1 skipped with nothing to check (b)", false, skip)
	if pass.Mark() != "PASS" || skip.Mark() != "SKIP" || fail.Mark() != "FAIL" {
		t.Fatal("marks wrong")
	}
}
