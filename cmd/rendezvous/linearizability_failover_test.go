package main

import (
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// linDeployment is several instances on one Redis serving one
// linearizability run: HTTP requests go to each live instance in turn, a
// slot's sockets talk to different instances' mediators (so introductions
// are forwarded between them), and injectFault kills the victim (SIGKILL)
// mid-history, after which everything goes to the survivor.
type linDeployment struct {
	survivor, victim *proc
	noKill           bool // no fault: both instances serve the whole history
	killed           atomic.Bool
	next             atomic.Uint64

	mu    sync.Mutex
	socks []*linSock
}

// pick is the instance the next HTTP request goes to, and whether it is
// the victim (whose failure to answer is then an unknown outcome).
func (d *linDeployment) pick() (*proc, bool) {
	if d.killed.Load() || d.next.Add(1)%2 == 0 {
		return d.survivor, false
	}
	return d.victim, true
}

// mediatorFor is the mediator socket number n talks to.
func (d *linDeployment) mediatorFor(n int) string {
	if n%2 == 0 {
		return d.survivor.mediator
	}
	return d.victim.mediator
}

func (d *linDeployment) addSock(s *linSock) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.socks = append(d.socks, s)
}

// injectFault kills the victim once a third of the run's worker
// operations are recorded, then moves every socket to the survivor, as
// clients of a dead instance do.
func (d *linDeployment) injectFault(t *testing.T, rec *recorder, deadline time.Time) {
	if d.noKill {
		return
	}
	for time.Now().Before(deadline) {
		rec.mu.Lock()
		n := len(rec.ops)
		rec.mu.Unlock()
		if n >= linSlots*(linCreators+linWorkers*linOpsPerWorker/3) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	d.killed.Store(true)
	if err := d.victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Errorf("cannot kill the victim: %v", err)
	}
	<-d.victim.exited
	t.Logf("instance killed at %v into the history", time.Duration(rec.now()).Round(time.Millisecond))
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.socks {
		if err := s.moveTo(d.survivor.mediator); err != nil {
			t.Error(err)
		}
	}
}

// TestLinearizabilityAcrossInstanceKill: the history of concurrent
// operations recorded across two instances on one Redis, one of them
// killed (SIGKILL) mid-history, is linearizable: the store is one atomic
// object across instances and a crash. Operations the killed instance
// never answered have unknown outcomes (see linFaultModel); INTRODUCEs
// the killed instance had yet to send may be lost, never duplicated (the
// observation is Lossy). The same history with an injected second
// introduction is illegal.
func TestLinearizabilityAcrossInstanceKill(t *testing.T) {
	args := append(linServerArgs(), redisStoreArgs(t)...)
	d := &linDeployment{survivor: startProc(t, args...), victim: startProc(t, args...)}
	rec := runLinHistory(t, d.survivor, d)

	unknown := 0
	for _, op := range rec.ops {
		if op.Output.(linOutput).Unknown {
			unknown++
		}
	}
	t.Logf("%d operations cut short by the kill", unknown)
	if unknown == 0 {
		t.Errorf("the kill cut no operation short: the run did not exercise unknown outcomes")
	}
	checkLinearizable(t, linFaultModel, rec.ops, porcupine.Ok)
	requireCoverage(t, rec.ops)
	checkLinearizable(t, linFaultModel, injectDoubleIntroduction(t, rec.ops), porcupine.Illegal)
}
