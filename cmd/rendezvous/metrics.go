package main

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/internal/version"
)

// processHelp is the HELP text of the families newProcessMetrics registers.
var processHelp = map[string]string{
	"rendezvous_available":          "1 while the store is available, 0 once it failed.",
	"rendezvous_draining":           "1 from the start of a drain (signal or POST /v1/admin/drain), else 0.",
	"rendezvous_attempts_in_flight": "Join attempts created but not yet introduced: what a drain waits for.",
	"rendezvous_build_info":         "Always 1; the labels name the running build: version, Go version and store.",
}

// newProcessMetrics registers the process-level gauges the components do
// not export themselves: availability, drain state, attempts in flight
// (what a drain waits for), from the store figures stats holds (read at
// most once a second, whatever the scrape rate), and the build info, whose
// store label is kind (--store: memory or redis).
func newProcessMetrics(stats *httpapi.StoreStats, kind string) *metrics.Set {
	s := metrics.NewSet()
	flag := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	st := func() engine.Stats { st, _ := stats.Stats(); return st }
	s.NewGauge("rendezvous_available", func() float64 { return flag(st().Available) })
	s.NewGauge("rendezvous_draining", func() float64 { return flag(st().Draining) })
	s.NewGauge("rendezvous_attempts_in_flight", func() float64 { return float64(st().InFlight) })
	// version.Version keeps only characters that need no escaping in a label.
	s.NewGauge(`rendezvous_build_info{version="`+version.Version()+`",go_version="`+version.GoVersion()+`",store="`+kind+`"}`,
		func() float64 { return 1 })
	return s
}
