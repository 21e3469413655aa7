package main

import (
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"html/template"
	"io"
	"os"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms":    func(v float64) string { return fmtFloat(v, 3) },
	"f1":    func(v float64) string { return fmtFloat(v, 1) },
	"res":   resourceValue,
	"yesno": yesNo,
}).Parse(reportTemplate))

func fmtFloat(v float64, prec int) string {
	return template.HTMLEscapeString(fmtFixed(v, prec))
}

// reportView is what the template renders.
type reportView struct {
	R *Result
	// Whole is the whole run; Measured the measured phase alone (overload,
	// load or udprate), whose rates the fill would otherwise dwarf.
	Whole, Measured *timeCharts
	MeasuredName    string
	Hists           []*Chart
	// Resources are the soak's RSS, fd and goroutine charts (soak only).
	Resources []*Chart
}

// timeCharts are the over-time charts of one stretch of the run.
type timeCharts struct {
	Throughput, Shed, Latency *Chart
}

// measuredPhases are the phases whose traffic is the run's subject.
var measuredPhases = map[string]bool{"overload": true, "load": true, "udprate": true, "soak": true}

// writeHTML renders the report: headline checks, tables, and SVG charts of
// throughput, shed and errors over time (for the whole run and for the
// measured phase) and one latency histogram per kind and phase. Standard
// library only; the file is self-contained.
func writeHTML(w io.Writer, res *Result) error {
	v := reportView{R: res, Whole: makeTimeCharts(res.Series, res.Timeline, ""), Resources: soakCharts(res.Soak)}
	for _, ph := range res.Timeline {
		if !measuredPhases[ph.Name] {
			continue
		}
		var pts []SeriesPoint
		for _, p := range res.Series {
			if p.Phase == ph.Name {
				pts = append(pts, p)
			}
		}
		v.MeasuredName = ph.Name
		v.Measured = makeTimeCharts(pts, []Phase{ph}, " during "+ph.Name)
	}
	for _, ph := range res.Phases {
		for _, k := range ph.Kinds {
			kk, _ := parseKind(k.Kind)
			v.Hists = append(v.Hists, histChart("Latency, "+k.Kind+" in "+ph.Name, kindColors[kk], k.Hist))
		}
	}
	return reportTmpl.Execute(w, v)
}

func makeTimeCharts(series []SeriesPoint, timeline []Phase, suffix string) *timeCharts {
	t := make([]float64, len(series))
	for i, p := range series {
		t[i] = p.T
	}
	var names, colors []string
	var tput, p99 [][]float64
	for k := Kind(0); k < numKinds; k++ {
		names = append(names, k.String())
		colors = append(colors, kindColors[k])
		s, q := make([]float64, len(t)), make([]float64, len(t))
		for i, p := range series {
			s[i] = p.Rate[k][ClassOK] + p.Rate[k][ClassShed] + p.Rate[k][ClassError]
			q[i] = p.P99ms[k]
		}
		tput, p99 = append(tput, s), append(p99, q)
	}
	ok, shed, errs := make([]float64, len(t)), make([]float64, len(t)), make([]float64, len(t))
	for i, p := range series {
		for k := Kind(0); k < numKinds; k++ {
			ok[i] += p.Rate[k][ClassOK]
			shed[i] += p.Rate[k][ClassShed]
			errs[i] += p.Rate[k][ClassError]
		}
	}
	return &timeCharts{
		Throughput: timeChart("Throughput per kind (answers per second)"+suffix, "per second", t, names, colors, tput, timeline),
		Shed: timeChart("Success, typed shed and errors (all kinds, per second)"+suffix, "per second", t,
			[]string{"ok", "shed", "error"}, []string{"#2ca02c", "#ff7f0e", "#d62728"}, [][]float64{ok, shed, errs}, timeline),
		Latency: timeChart("p99 latency per kind (ms)"+suffix, "ms", t, names, colors, p99, timeline),
	}
}

// runReport implements "rendezvous-load report": it renders report.html
// again from a result.json (after an upgrade of the report, or to compare
// runs side by side).
func runReport(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("rendezvous-load report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "result.json", "result file written by a run")
	out := fs.String("out", "report.html", "HTML report to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		return fmt.Errorf("cannot read result: %w", err)
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("cannot decode %s: %w", *in, err)
	}
	f, err := os.Create(*out)
	if err != nil {
		return fmt.Errorf("cannot write report: %w", err)
	}
	if err := writeHTML(f, &res); err != nil {
		f.Close()
		return fmt.Errorf("cannot render report: %w", err)
	}
	return f.Close()
}
