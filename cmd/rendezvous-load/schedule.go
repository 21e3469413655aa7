package main

import (
	"context"
	"math"
	"sync"
	"time"
)

// schedTick is how often the open-loop generator wakes to release requests.
// Each wake releases the requests due within the next tick; a worker waits
// until its request's intended start time before sending it, and latency is
// measured from that intended time (no coordinated omission), so neither the
// tick granularity nor a busy generator biases it.
const schedTick = 5 * time.Millisecond

// Stream is one open-loop request kind: Rate requests per second, reached
// linearly over Ramp, served by Workers goroutines each calling Do.
type Stream struct {
	Kind    Kind
	Rate    float64
	Ramp    time.Duration
	Workers int
	// Do performs one request that was due at intended and records its
	// outcome itself. It is called from Workers goroutines concurrently.
	Do func(ctx context.Context, intended time.Time)
}

// dueBy returns how many requests a stream has scheduled at elapsed time t:
// the integral of rate(t) = Rate*min(1, t/Ramp).
func dueBy(rate float64, ramp, t time.Duration) uint64 {
	if t <= 0 || rate <= 0 {
		return 0
	}
	s := t.Seconds()
	r := ramp.Seconds()
	if r <= 0 {
		return uint64(rate * s)
	}
	if s < r {
		return uint64(rate * s * s / (2 * r))
	}
	return uint64(rate * (r/2 + (s - r)))
}

// RunOpenLoop drives every stream for d (or until ctx ends) and waits for
// in-flight requests. It lasts d even when no stream has a rate: the
// traffic of that stretch may come from elsewhere (the keepers' presence
// and renewals), and a measured phase must not end before it began. A request that finds every worker busy (and the
// stream's small queue full) is not queued further: it is counted late in rec,
// so an overloaded generator shows up in the report instead of silently
// lowering the offered rate.
func RunOpenLoop(ctx context.Context, streams []Stream, d time.Duration, rec *RecSwitch) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range streams {
		s := &streams[i]
		if s.Rate <= 0 || s.Do == nil {
			continue
		}
		workers := s.Workers
		if workers < 1 {
			workers = 1
		}
		// The queue holds two ticks' worth of requests beyond the workers.
		queue := make(chan time.Time, workers+2*int(s.Rate*schedTick.Seconds())+1)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for intended := range queue {
					if wait := time.Until(intended); wait > 0 {
						time.Sleep(wait)
					}
					s.Do(ctx, intended)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(queue)
			generate(ctx, s, queue, rec)
		}()
	}
	<-ctx.Done()
	wg.Wait()
}

func generate(ctx context.Context, s *Stream, queue chan<- time.Time, rec *RecSwitch) {
	start := time.Now()
	tick := time.NewTicker(schedTick)
	defer tick.Stop()
	var issued uint64
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			due := dueBy(s.Rate, s.Ramp, now.Sub(start)+schedTick)
			for ; issued < due; issued++ {
				if ctx.Err() != nil {
					return
				}
				intended := intendedAt(s.Rate, s.Ramp, start, issued)
				select {
				case queue <- intended:
				default:
					rec.Load().Late(s.Kind)
				}
			}
		}
	}
}

// intendedAt inverts dueBy: the time request n (0-based) was due.
func intendedAt(rate float64, ramp time.Duration, start time.Time, n uint64) time.Time {
	x := float64(n + 1)
	r := ramp.Seconds()
	var s float64
	switch {
	case r <= 0:
		s = x / rate
	case x < rate*r/2:
		// x = rate*s^2/(2r)  =>  s = sqrt(2*r*x/rate)
		s = math.Sqrt(2 * r * x / rate)
	default:
		s = x/rate - r/2 + r
	}
	return start.Add(time.Duration(s * float64(time.Second)))
}
