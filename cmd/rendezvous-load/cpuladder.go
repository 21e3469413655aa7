package main

import (
	"cmp"
	"context"
	"sync/atomic"
	"time"
)

// CPUStep is one step of the CPU ladder: one kind offered alone at one
// rate for --step-duration, and what the server spent on it.
type CPUStep struct {
	Kind         string  `json:"kind"` // "baseline": the keepers alone
	OfferedPerS  float64 `json:"offered_per_s"`
	AnsweredPerS float64 `json:"answered_per_s"`
	Answers      uint64  `json:"answers"` // of this kind, the keepers' share removed
	Errors       uint64  `json:"errors"`
	Seconds      float64 `json:"seconds"`
	CPUSeconds   float64 `json:"cpu_seconds"`       // the server's, the baseline's share removed
	MicrosPerAns float64 `json:"cpu_us_per_answer"` // 0 when nothing was answered
}

// cpuLadder measures the server's CPU per answer of each kind of --rate as
// its offered rate rises: a baseline step with the keepers alone, then each
// kind alone at 1/N, 2/N, ..., N/N of its rate. A step's CPU and answers
// are net of the baseline's (per second), so the keepers' presence and
// renewals are not charged to the kind measured. A join's figure includes
// its two binds and the introduction; binds are not stepped on their own
// (they need the joins' fresh attempts).
func (r *Run) cpuLadder(ctx context.Context, res *Result, live []int) {
	cfg := r.cfg
	var base CPUStep
	var baseCounts Counts
	var measureErr error
	step := func(kind Kind, rate float64, streams []Stream) (CPUStep, Counts) {
		rec := r.rec.Load()
		var c0, c1 Counts
		rec.Load(&c0)
		u0, err0 := r.serverUsage()
		t0 := time.Now()
		RunOpenLoop(ctx, streams, cfg.StepDuration, &r.rec)
		r.waitUDP(ctx)
		u1, err1 := r.serverUsage()
		rec.Load(&c1)
		if err := cmp.Or(err0, err1); err != nil {
			measureErr = err
		}
		d := c1.Sub(&c0)
		return CPUStep{Kind: kind.String(), OfferedPerS: rate, Seconds: time.Since(t0).Seconds(), CPUSeconds: u1.CPUSeconds - u0.CPUSeconds}, d
	}
	r.phase("cpu-steps", func() error {
		base, baseCounts = step(0, 0, nil)
		base.Kind = "baseline"
		res.CPUSteps = append(res.CPUSteps, base)
		for k := Kind(0); k < numKinds && ctx.Err() == nil; k++ {
			if k == KindBind {
				continue // binds need fresh attempts: measured within join
			}
			for i := 1; i <= cfg.CPUSteps && cfg.Rates[k] > 0 && ctx.Err() == nil; i++ {
				rate := cfg.Rates[k] * float64(i) / float64(cfg.CPUSteps)
				s, d := step(k, rate, r.soloStreams(k, rate, live))
				share := s.Seconds / base.Seconds
				answered := float64(d.Answered(k)) - share*float64(baseCounts.Answered(k))
				s.Answers = uint64(max(0, answered))
				s.Errors = d.Class(k, ClassError)
				s.AnsweredPerS = float64(s.Answers) / s.Seconds
				s.CPUSeconds -= share * base.CPUSeconds
				if s.Answers > 0 {
					s.MicrosPerAns = max(0, s.CPUSeconds) * 1e6 / float64(s.Answers)
				}
				res.CPUSteps = append(res.CPUSteps, s)
			}
		}
		return nil
	})
	if measureErr != nil {
		res.addCheck("cpu.measured", false, "the server's CPU time could not be read: %v", measureErr)
	}
}

// soloStreams offers kind k alone at rate: the traffic streams for every
// kind but presence and renew, which get a stream of their own over the
// live listings on top of the keepers.
func (r *Run) soloStreams(k Kind, rate float64, live []int) []Stream {
	var rates RateSet
	rates[k] = rate
	if k != KindPresence && k != KindRenew {
		return r.trafficStreams(live, &rates, nil)
	}
	if len(live) == 0 {
		return nil
	}
	var cur atomic.Uint64
	return []Stream{{Kind: k, Rate: rate, Workers: max(2, r.cfg.Conns/4), Do: func(ctx context.Context, intended time.Time) {
		i := live[int(cur.Add(1)-1)%len(live)]
		if k == KindPresence {
			r.sendPresence(i, intended)
		} else {
			r.renew(i, intended)
		}
	}}}
}
