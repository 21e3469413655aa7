package main

import (
	_ "embed"
	"html/template"
	"io"
)

//go:embed report.html.tmpl
var reportTemplate string

var reportTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ms": func(v float64) string { return fmtFloat(v, 3) },
	"f1": func(v float64) string { return fmtFloat(v, 1) },
}).Parse(reportTemplate))

func fmtFloat(v float64, prec int) string {
	return template.HTMLEscapeString(fmtFixed(v, prec))
}

// reportView is what the template renders.
type reportView struct {
	R          *Result
	Throughput *Chart
	Shed       *Chart
	Latency    *Chart
	Hists      []*Chart
}

// writeHTML renders the report: headline checks, tables, and SVG charts of
// throughput, shed and errors over time and one latency histogram per kind
// and phase. Standard library only; the file is self-contained.
func writeHTML(w io.Writer, res *Result) error {
	v := reportView{R: res}
	t := make([]float64, len(res.Series))
	for i, p := range res.Series {
		t[i] = p.T
	}
	var names, colors []string
	var tput, p99 [][]float64
	for k := Kind(0); k < numKinds; k++ {
		names = append(names, k.String())
		colors = append(colors, kindColors[k])
		s, q := make([]float64, len(t)), make([]float64, len(t))
		for i, p := range res.Series {
			s[i] = p.Rate[k][ClassOK] + p.Rate[k][ClassShed] + p.Rate[k][ClassError]
			q[i] = p.P99ms[k]
		}
		tput, p99 = append(tput, s), append(p99, q)
	}
	v.Throughput = timeChart("Throughput per kind (answers per second)", "per second", t, names, colors, tput, res.Timeline)
	ok, shed, errs := make([]float64, len(t)), make([]float64, len(t)), make([]float64, len(t))
	for i, p := range res.Series {
		for k := Kind(0); k < numKinds; k++ {
			ok[i] += p.Rate[k][ClassOK]
			shed[i] += p.Rate[k][ClassShed]
			errs[i] += p.Rate[k][ClassError]
		}
	}
	v.Shed = timeChart("Success, typed shed and errors over time (all kinds)", "per second", t,
		[]string{"ok", "shed", "error"}, []string{"#2ca02c", "#ff7f0e", "#d62728"}, [][]float64{ok, shed, errs}, res.Timeline)
	v.Latency = timeChart("p99 latency per kind over time (ms)", "ms", t, names, colors, p99, res.Timeline)
	for _, ph := range res.Phases {
		for _, k := range ph.Kinds {
			kk, _ := parseKind(k.Kind)
			v.Hists = append(v.Hists, histChart("Latency, "+k.Kind+" in "+ph.Name, kindColors[kk], k.Hist))
		}
	}
	return reportTmpl.Execute(w, v)
}
