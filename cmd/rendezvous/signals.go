package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/httpapi"
)

// drainPoll is how often drain checks whether attempts are still in flight.
const drainPoll = 50 * time.Millisecond

// signalContext returns a context cancelled by the first SIGTERM or SIGINT
// (run then drains). A second signal logs and exits the process at once
// with status 1, whatever is in flight. stop releases the signals.
func signalContext() (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			slog.Error("second signal: exiting at once", "signal", sig.String())
			os.Exit(exitFailure)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel()
	}
}

// reloadOnHangup re-reads the principals file on every SIGHUP until stop
// is called (see httpapi.API.ReloadPrincipals: a bad file is logged and
// changes nothing; without a file, under --dev, the signal is logged and
// ignored). stop waits for a reload in progress.
func reloadOnHangup(api *httpapi.API, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		for {
			select {
			case <-ch:
				// ReloadPrincipals logs the outcome itself, success or refusal.
				if _, err := api.ReloadPrincipals("SIGHUP"); errors.Is(err, httpapi.ErrNotReloadable) {
					log.Warn("SIGHUP ignored: no principals file to reload (started with --dev)")
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		<-exited
	}
}

// drain begins the store's drain (readiness is 503 from now on and new work
// is refused), then waits until no attempt is in flight or the drain window
// has passed, whichever comes first.
func (s *server) drain() {
	if s.instance != nil {
		s.drainInstance() // one of several instances: the shared state stays
		return
	}
	window := s.limits.DrainWindow
	// Taken before BeginDrain, so this deadline is never after the store's:
	// once it has passed, an empty store means the window ended, not that
	// the attempts finished.
	deadline := time.Now().Add(window)
	s.log.Info("draining", "window", window.String(), "in_flight", s.store.Stats().InFlight)
	// BeginDrain fails only for a cancelled context, and this one is not.
	if err := s.store.BeginDrain(context.Background()); err != nil {
		s.log.Error("cannot begin drain", "err", err)
	}
	s.stats.Invalidate() // readiness says draining at once
	reason, inFlight := waitDrained(s.store, deadline, drainPoll)
	s.log.Info("drain finished", "reason", reason, "in_flight", inFlight)
}

// statser is the part of engine.Store drain needs.
type statser interface{ Stats() engine.Stats }

// waitDrained polls st every poll until deadline has passed ("window") or
// nothing is in flight ("idle"), checked in that order. It returns the
// reason and how many attempts were in flight at the last poll.
func waitDrained(st statser, deadline time.Time, poll time.Duration) (reason string, inFlight int) {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		passed := !time.Now().Before(deadline)
		n := st.Stats().InFlight
		if passed {
			return "window", n
		}
		if n == 0 {
			return "idle", 0
		}
		<-t.C
	}
}
