package main

import (
	"sync/atomic"

	"github.com/rendezvous/rendezvous/client"
)

// RelaySummary counts the relay-only join attempts (--relay-only) and the
// relay credentials the server granted with admitted attempts. The
// credentials themselves are never kept.
type RelaySummary struct {
	Share     float64 `json:"relay_only_share"`
	Requested uint64  `json:"relay_only_requested"`
	Admitted  uint64  `json:"relay_only_admitted"`
	// WithCredentials: admitted relay-only attempts whose answer carried a
	// relay object.
	WithCredentials uint64 `json:"relay_only_with_credentials"`
	// AnyWithCredentials: admitted attempts of either kind that did.
	AnyWithCredentials uint64 `json:"admitted_with_credentials"`
}

// relayCounts are RelaySummary's counters while the run goes.
type relayCounts struct {
	joins, requested, admitted, withCreds, anyWithCreds atomic.Uint64
}

// relayOnlyNext says whether the next join is relay-only: exactly
// --relay-only of the joins, spread evenly (the n-th join is relay-only
// when floor(n*share) steps up).
func (r *Run) relayOnlyNext() bool {
	share := r.cfg.RelayOnly
	if share <= 0 {
		return false
	}
	n := float64(r.relay.joins.Add(1))
	if uint64(n*share) == uint64((n-1)*share) {
		return false
	}
	r.relay.requested.Add(1)
	return true
}

// noteJoin counts an admitted attempt and whether it got credentials.
func (r *Run) noteJoin(relayOnly bool, at *client.Attempt) {
	creds := at.Relay != nil
	if creds {
		r.relay.anyWithCreds.Add(1)
	}
	if relayOnly {
		r.relay.admitted.Add(1)
		if creds {
			r.relay.withCreds.Add(1)
		}
	}
}

// relayCheck reports the relay figures and, when relay-only attempts were
// asked for, checks that every admitted one got its credentials.
func (r *Run) relayCheck(res *Result) {
	if r.cfg.RelayOnly <= 0 {
		return
	}
	s := &RelaySummary{Share: r.cfg.RelayOnly, Requested: r.relay.requested.Load(), Admitted: r.relay.admitted.Load(),
		WithCredentials: r.relay.withCreds.Load(), AnyWithCredentials: r.relay.anyWithCreds.Load()}
	res.Relay = s
	res.addCheck("relay.credentials", s.Admitted > 0 && s.WithCredentials == s.Admitted,
		"%d of %d admitted relay-only attempts got relay credentials (%d requested; %d admitted attempts of either kind got them)",
		s.WithCredentials, s.Admitted, s.Requested, s.AnyWithCredentials)
}
