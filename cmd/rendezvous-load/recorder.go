package main

import (
	"sync/atomic"
	"time"
)

// Recorder accumulates every observed outcome: a counter per (kind, code)
// and a latency histogram per (kind, class). Observe is safe for concurrent
// use and does not allocate. A Recorder is created once per run and lives
// until the report is written.
type Recorder struct {
	counts [numKinds][numCodes]atomic.Uint64
	hists  [numKinds][numClasses]Histogram
	// service holds, for HTTP requests, the time from sending to the answer
	// (without any wait for a free worker), per (kind, class): the server's
	// answer time, as opposed to the open-loop latency in hists.
	service [numKinds][numClasses]Histogram
	// late counts scheduled requests the generator could not start because
	// every worker was busy (the open-loop schedule was not met).
	late [numKinds]atomic.Uint64
	// started is when the phase this Recorder counts began (zero: unknown),
	// so the first progress line of a phase divides by the phase's time.
	started time.Time
}

// Observe records one answered (or failed) request.
func (r *Recorder) Observe(k Kind, c Code, latency time.Duration) {
	r.counts[k][c].Add(1)
	r.hists[k][c.Class()].Record(latency)
}

// ObserveService records an HTTP request's send-to-answer time; call it in
// addition to Observe.
func (r *Recorder) ObserveService(k Kind, c Code, d time.Duration) {
	r.service[k][c.Class()].Record(d)
}

// ServiceHist copies the service-time snapshot of (k, cl).
func (r *Recorder) ServiceHist(k Kind, cl Class, dst *HistSnapshot) { r.service[k][cl].Snapshot(dst) }

// Late records one scheduled request that was not sent in time.
func (r *Recorder) Late(k Kind) { r.late[k].Add(1) }

// Counts is a point-in-time copy of the counters.
type Counts struct {
	ByCode [numKinds][numCodes]uint64
	Late   [numKinds]uint64
}

// Load copies the counters into c.
func (r *Recorder) Load(c *Counts) {
	for k := range r.counts {
		for i := range r.counts[k] {
			c.ByCode[k][i] = r.counts[k][i].Load()
		}
		c.Late[k] = r.late[k].Load()
	}
}

// Class sums the counts of kind k in class cl.
func (c *Counts) Class(k Kind, cl Class) uint64 {
	var n uint64
	for i, v := range c.ByCode[k] {
		if Code(i).Class() == cl {
			n += v
		}
	}
	return n
}

// Total sums every code of kind k.
func (c *Counts) Total(k Kind) uint64 {
	var n uint64
	for _, v := range c.ByCode[k] {
		n += v
	}
	return n
}

// Answered counts the requests of kind k the server answered: every code
// but a timeout and a transport failure.
func (c *Counts) Answered(k Kind) uint64 {
	return c.Total(k) - c.ByCode[k][CodeTimeout] - c.ByCode[k][CodeTransport]
}

// Sub returns c - o (for per-interval rates).
func (c *Counts) Sub(o *Counts) Counts {
	var d Counts
	for k := range c.ByCode {
		for i := range c.ByCode[k] {
			d.ByCode[k][i] = c.ByCode[k][i] - o.ByCode[k][i]
		}
		d.Late[k] = c.Late[k] - o.Late[k]
	}
	return d
}

// KindHist returns the merged latency snapshot of kind k over all classes
// (all == true) or of one class.
func (r *Recorder) KindHist(k Kind, cl Class, all bool, dst *HistSnapshot) {
	var tmp HistSnapshot
	*dst = HistSnapshot{}
	for c := Class(0); c < numClasses; c++ {
		if !all && c != cl {
			continue
		}
		r.hists[k][c].Snapshot(&tmp)
		dst.Add(&tmp)
	}
}

// RecSwitch points at the Recorder of the current phase (fill or measured),
// so each phase's table and validations count only its own requests. Safe
// for concurrent use.
type RecSwitch struct{ atomic.Pointer[Recorder] }
