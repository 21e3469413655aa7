package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/internal/loadresult"
)

// runUDPRate measures the highest answered UDP rate the server sustains: it
// keeps cfg.Window requests in flight per socket (closed loop) for
// cfg.Duration and counts answers. With --stun presence the requests are
// authenticated presence refreshes of cfg.Listings held listings; with
// --stun plain they are unauthenticated Binding requests, so the same
// generator can measure any STUN server (bench/compare.sh runs coturn).
func runUDPRate(ctx context.Context, r *Run, res *Result) error {
	cfg := r.cfg
	kind := KindPlain
	if cfg.Stun == "presence" {
		kind = KindPresence
		fill, err := r.setupFill(ctx, res, cfg.Listings)
		if err != nil {
			return err
		}
		if len(r.listings) < len(r.udp) || fill.Presence.Admitted != cfg.Listings {
			return fmt.Errorf("only %d of %d listings have live presence", fill.Presence.Admitted, cfg.Listings)
		}
	} else if err := r.openUDP(cfg.Mediator); err != nil {
		return err
	}
	cpu0, cpuErr := r.serverUsage()
	var sent atomic.Uint64
	t0 := time.Now()
	r.phase("udprate", func() error {
		// One pump per socket keeps cfg.Window requests in flight on it,
		// polling the lock-free in-flight count: no per-request handoff.
		deadline := t0.Add(cfg.Duration)
		var wg sync.WaitGroup
		for si, c := range r.udp {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var req stunRequest
				n := 0
				for ctx.Err() == nil {
					now := time.Now()
					if !now.Before(deadline) {
						return
					}
					if c.InFlight() >= cfg.Window {
						time.Sleep(20 * time.Microsecond)
						continue
					}
					var err error
					if kind == KindPresence {
						// Socket si owns listings si, si+S, si+2S, ...
						i := si + (n%r.perSocket(si))*len(r.udp)
						h := r.presenceRequest(i, &req)
						if err = c.Send(KindPresence, int32(i), &req, now); err != nil {
							h.inflight.Add(-1)
						}
					} else {
						err = c.SendPlain(-1, now)
					}
					if err != nil {
						time.Sleep(100 * time.Microsecond)
						continue
					}
					n++
					sent.Add(1)
				}
			}()
		}
		wg.Wait()
		r.waitUDP(ctx)
		return nil
	})
	secs := time.Since(t0).Seconds()
	cpu1, cpuErr2 := r.serverUsage()
	var c Counts
	r.phaseRecs["udprate"].Load(&c)
	u := &loadresult.UDPRate{Kind: cfg.Stun, Sockets: len(r.udp), Window: cfg.Window, Sent: sent.Load(),
		Answered: c.Answered(kind),
		OK:       c.ByCode[kind][CodeOK], Lost: c.ByCode[kind][CodeTimeout], Seconds: secs}
	u.PerSecond = float64(u.Answered) / secs
	if cpuErr == nil && cpuErr2 == nil && u.Answered > 0 {
		u.CPUPerAnswer = (cpu1.CPUSeconds - cpu0.CPUSeconds) * 1e6 / float64(u.Answered)
		res.ServerCPU = cpuSummary("udprate", cpu1.CPUSeconds-cpu0.CPUSeconds, u.Answered)
	}
	res.UDPRate = u
	add := res.addCheck
	add("udprate.answered", u.OK == u.Answered && u.Answered > 0, "%d %s requests answered at %.0f/s (%d ok, %d lost) with %d×%d in flight",
		u.Answered, cfg.Stun, u.PerSecond, u.OK, u.Lost, len(r.udp), cfg.Window)
	add("udprate.loss", u.Lost*100 <= u.Sent, "%d of %d requests unanswered (limit 1%%)", u.Lost, u.Sent)
	return nil
}

// perSocket is how many held listings socket si owns (i % sockets == si).
func (r *Run) perSocket(si int) int {
	return (len(r.listings) - si + len(r.udp) - 1) / len(r.udp)
}
