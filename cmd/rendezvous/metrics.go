package main

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
)

// newProcessMetrics registers the process-level gauges the components do
// not export themselves: availability, drain state and attempts in flight
// (what a drain waits for). Each is read from Stats at scrape time.
func newProcessMetrics(store engine.Store) *metrics.Set {
	s := metrics.NewSet()
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	s.NewGauge("rendezvous_available", func() float64 { return flag(store.Available()) })
	s.NewGauge("rendezvous_draining", func() float64 { return flag(store.Draining()) })
	s.NewGauge("rendezvous_attempts_in_flight", func() float64 { return float64(store.Stats().InFlight) })
	return s
}
