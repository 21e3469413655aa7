package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestDueByAndIntendedAt(t *testing.T) {
	start := time.Unix(1000, 0)
	f := func(rate float64, ramp time.Duration) {
		t.Helper()
		prev := start
		for n := uint64(0); n < 5000; n += 7 {
			at := intendedAt(rate, ramp, start, n)
			if at.Before(prev) {
				t.Fatalf("rate %v ramp %v: intended time of %d goes backwards", rate, ramp, n)
			}
			prev = at
			// Request n is due exactly when its intended time is reached.
			if got := dueBy(rate, ramp, at.Sub(start)+time.Microsecond); got < n+1 {
				t.Fatalf("rate %v ramp %v: dueBy(intendedAt(%d)) = %d", rate, ramp, n, got)
			}
		}
	}
	f(1000, 0)
	f(1000, 2*time.Second)
	f(3.5, time.Second)
	f(100000, 10*time.Second)
	if dueBy(100, 0, 10*time.Second) != 1000 || dueBy(100, 10*time.Second, 10*time.Second) != 500 {
		t.Fatal("dueBy totals wrong")
	}
	if dueBy(0, 0, time.Second) != 0 || dueBy(10, 0, -time.Second) != 0 {
		t.Fatal("dueBy of nothing is not zero")
	}
}

// A saturated stream does not queue without bound: what no worker can take
// is counted late.
func TestOpenLoopCountsLate(t *testing.T) {
	var rs RecSwitch
	rs.Store(new(Recorder))
	var done atomic.Int64
	streams := []Stream{{Kind: KindGet, Rate: 20000, Workers: 1, Do: func(ctx context.Context, _ time.Time) {
		<-ctx.Done() // a server that never answers
		done.Add(1)
	}}}
	RunOpenLoop(context.Background(), streams, 300*time.Millisecond, &rs)
	var c Counts
	rs.Load().Load(&c)
	queueCap := int64(1 + 2*int(20000*schedTick.Seconds()) + 1)
	if done.Load() > queueCap+2 {
		t.Fatalf("%d requests ran, more than one worker and its queue of %d", done.Load(), queueCap)
	}
	if c.Late[KindGet] == 0 {
		t.Fatal("no request counted late")
	}
}

// Every request a free stream schedules runs, each no earlier than intended.
func TestOpenLoopRunsOnTime(t *testing.T) {
	var rs RecSwitch
	rs.Store(new(Recorder))
	var early, runs atomic.Int64
	streams := []Stream{{Kind: KindBrowse, Rate: 2000, Workers: 4, Do: func(ctx context.Context, intended time.Time) {
		if time.Now().Before(intended) {
			early.Add(1)
		}
		runs.Add(1)
	}}}
	RunOpenLoop(context.Background(), streams, 500*time.Millisecond, &rs)
	var c Counts
	rs.Load().Load(&c)
	if early.Load() != 0 {
		t.Fatalf("%d requests ran before their intended time", early.Load())
	}
	if runs.Load() == 0 || runs.Load() > int64(dueBy(2000, 0, 500*time.Millisecond+2*schedTick)) {
		t.Fatalf("%d runs for a 500ms stream at 2000/s", runs.Load())
	}
}
