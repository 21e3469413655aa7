package haevidence

import (
	"sync"
	"time"
)

// Load is the harness of a fault scenario's concurrent load: it runs the
// scenario's workers until it is halted and counts their answers (its
// Tally). The workers themselves (which requests, which checks) are the
// scenario's.
type Load struct {
	*Tally
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
}

// NewLoad is a load with no worker yet; zero are the outcomes its record
// names even when none came (NewTally).
func NewLoad(zero ...string) *Load {
	return &Load{Tally: NewTally(zero...), stop: make(chan struct{})}
}

// Go runs worker, which returns once Stopped (or Done) says so.
func (l *Load) Go(worker func()) {
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		worker()
	}()
}

// Every runs op(0), op(1), … every interval (waiting first) until the
// load is halted.
func (l *Load) Every(interval time.Duration, op func(i int)) {
	l.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-time.After(interval):
			}
			op(i)
		}
	})
}

// Done is closed when the load is halted.
func (l *Load) Done() <-chan struct{} { return l.stop }

// Stopped reports whether the load is halted.
func (l *Load) Stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// Halt stops the workers and waits for them; calling it again does
// nothing more.
func (l *Load) Halt() {
	l.once.Do(func() { close(l.stop) })
	l.wg.Wait()
}
