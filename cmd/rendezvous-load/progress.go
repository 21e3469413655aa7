package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// SeriesPoint is one progress interval: per kind, answers per class and the
// interval's p99. The charts are drawn from these.
type SeriesPoint struct {
	T     float64                       `json:"t_s"`
	Phase string                        `json:"phase"`
	Rate  [numKinds][numClasses]float64 `json:"rate"` // per second
	P50ms [numKinds]float64             `json:"p50_ms"`
	P99ms [numKinds]float64             `json:"p99_ms"`
}

// isTerminal reports whether f is a terminal (a live progress line is drawn
// in place only there; elsewhere plain periodic lines are printed).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// seriesEvery is the charts' time resolution: fine enough to show a fill
// that lasts a second or two, independent of the progress interval.
const seriesEvery = 250 * time.Millisecond

// window accumulates what a Recorder counted since its last reset.
type window struct {
	rec   *Recorder
	start time.Time
	count Counts
	hist  [numKinds]HistSnapshot
}

// point returns the window's rates and quantiles up to now (cur and curH
// are the Recorder's totals at now) and restarts the window there. A
// Recorder switch (a new phase) restarts the counts from zero and the clock
// from switched, the last sample before the switch was seen.
func (w *window) point(rec *Recorder, now, switched time.Time, cur *Counts, curH *[numKinds]HistSnapshot) SeriesPoint {
	if rec != w.rec {
		// The window restarts where the new Recorder's phase began: the
		// switch can lie a whole print interval back, and the counts
		// since it would otherwise be divided by one sample period.
		if !rec.started.IsZero() && rec.started.Before(now) {
			switched = rec.started
		}
		*w = window{rec: rec, start: switched}
	}
	dt := now.Sub(w.start).Seconds()
	if dt <= 0 {
		dt = 1e-9
	}
	d := cur.Sub(&w.count)
	var p SeriesPoint
	for k := Kind(0); k < numKinds; k++ {
		diff := curH[k]
		sub(&diff, &w.hist[k])
		p.P50ms[k] = ms(diff.Quantile(0.50))
		p.P99ms[k] = ms(diff.Quantile(0.99))
		for c := Class(0); c < numClasses; c++ {
			p.Rate[k][c] = float64(d.Class(k, c)) / dt
		}
	}
	w.start, w.count, w.hist = now, *cur, *curH
	return p
}

// progress samples the current Recorder every seriesEvery (a SeriesPoint
// for the charts) and prints a line every interval, until stop is closed.
// It runs on its own goroutine; done is closed when it returns.
func (r *Run) progress(interval time.Duration, tty bool, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	every := min(seriesEvery, interval)
	t := time.NewTicker(every)
	defer t.Stop()
	var cur Counts
	var curH [numKinds]HistSnapshot
	now0 := time.Now()
	sample, print := window{start: now0}, window{start: now0}
	for {
		select {
		case <-stop:
			if tty {
				fmt.Fprintln(r.out)
			}
			return
		case now := <-t.C:
			rec := r.rec.Load()
			rec.Load(&cur)
			for k := Kind(0); k < numKinds; k++ {
				rec.KindHist(k, 0, true, &curH[k])
			}
			lastSample := sample.start
			p := sample.point(rec, now, lastSample, &cur, &curH)
			p.T, p.Phase = r.since(now), r.currentPhase()
			r.phaseMu.Lock()
			r.series = append(r.series, p)
			r.phaseMu.Unlock()
			if now.Sub(print.start) < interval-every/2 {
				continue
			}
			pp := print.point(rec, now, lastSample, &cur, &curH)
			pp.T, pp.Phase = p.T, p.Phase
			line := formatProgress(&pp, &cur)
			if tty {
				fmt.Fprintf(r.out, "\r\x1b[K%s", line)
			} else {
				fmt.Fprintln(r.out, line)
			}
		}
	}
}

func (r *Run) currentPhase() string {
	r.phaseMu.Lock()
	defer r.phaseMu.Unlock()
	if len(r.phases) == 0 {
		return ""
	}
	return r.phases[len(r.phases)-1].Name
}

// sub subtracts o from s bucket by bucket (s must be the later snapshot).
func sub(s, o *HistSnapshot) {
	for i := range s.Counts {
		s.Counts[i] -= o.Counts[i]
	}
	s.Total -= o.Total
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// progressWidth bounds the widest progress line, with every kind active
// and every figure at its widest (15 columns a kind); a run offers a few
// kinds, so its lines are far shorter.
const progressWidth = 210

// progressNames are the kinds' three-letter names on the progress line.
var progressNames = [numKinds]string{"crt", "rnw", "brw", "get", "joi", "prs", "bnd", "pln", "del", "lvz", "brf", "qjn"}

// formatProgress renders one progress line of at most progressWidth
// columns: elapsed seconds and phase (both truncated to fit), then per
// active kind its answer rate in the interval and its error total in the
// phase ("brw 1.2k e0"), and the phase's typed sheds when there were any.
func formatProgress(p *SeriesPoint, total *Counts) string {
	var b strings.Builder
	phase := p.Phase
	if len(phase) > 8 {
		phase = phase[:8]
	}
	fmt.Fprintf(&b, "%5.0fs %-8s", min(p.T, 99999), phase)
	var shed uint64
	for k := Kind(0); k < numKinds; k++ {
		if total.Total(k) == 0 {
			continue
		}
		rate := p.Rate[k][ClassOK] + p.Rate[k][ClassShed] + p.Rate[k][ClassError]
		fmt.Fprintf(&b, " %s %s e%s", progressNames[k], compact(rate), compact(float64(total.Class(k, ClassError))))
		shed += total.Class(k, ClassShed)
	}
	if shed > 0 {
		fmt.Fprintf(&b, " shed %s", compact(float64(shed)))
	}
	return b.String()
}

// compact renders v >= 0 in at most four characters: 999, 1.2k, 12k, 999k,
// 1.2M, ... (rounded).
func compact(v float64) string {
	if v < 999.5 {
		return fmt.Sprintf("%.0f", max(v, 0))
	}
	for _, suffix := range []string{"k", "M", "G", "T", "P", "E"} {
		v /= 1000
		if v < 9.95 {
			return fmt.Sprintf("%.1f%s", v, suffix)
		}
		if v < 999.5 {
			return fmt.Sprintf("%.0f%s", v, suffix)
		}
	}
	return "many"
}
