package client

import (
	"context"
	"time"
)

// AttemptState is where a join attempt stands (docs/contracts/http.md#join-attempt-state):
// one of the constants below; a newer server may answer others.
type AttemptState string

const (
	AttemptCreated     AttemptState = "created"
	AttemptOffered     AttemptState = "offered"      // the host was told of it
	AttemptHostBound   AttemptState = "host_bound"   // the host bound, the client not yet
	AttemptClientBound AttemptState = "client_bound" // the client bound (both sides, for an attempt awaiting relay candidates)
	AttemptIntroduced  AttemptState = "introduced"   // INTRODUCE went to both sides
	AttemptRelayed     AttemptState = "relayed"      // RELAY-INTRODUCE went to both sides
	AttemptExpired     AttemptState = "expired"      // its lifetime ended (Reason says where it stood)
	AttemptFailed      AttemptState = "failed"       // ended early (Reason: listing_removed, lease_expired, revoked, drained)
)

// AttemptStatus is a join attempt's state as the server keeps it, live and
// for ten minutes after it ended, so a stuck join can be diagnosed.
type AttemptStatus struct {
	AttemptID AttemptID
	ListingID ListingID
	State     AttemptState
	// Reason is a short snake_case code saying why (e.g. awaiting_host_bind,
	// awaiting_relay_candidates, lease_expired).
	Reason    string
	RelayOnly bool
	ExpiresAt time.Time
	// HostBound and ClientBound: the side bound on the mediator;
	// HostRelayed and ClientRelayed: it sent its relayed address.
	HostBound, ClientBound     bool
	HostRelayed, ClientRelayed bool
	// HostOutcome and ClientOutcome are each side's punch outcome report,
	// nil until that side reported.
	HostOutcome, ClientOutcome *PunchOutcome
}

// PunchOutcome is how one side's connection ended, as it reported it.
type PunchOutcome struct {
	Path        string // "direct", "relayed" or "failed"
	ConnectTime time.Duration
}

type wireOutcome struct {
	Path      string `json:"path"`
	ConnectMS uint32 `json:"connect_ms"`
}

func (w *wireOutcome) outcome() *PunchOutcome {
	if w == nil {
		return nil
	}
	return &PunchOutcome{Path: w.Path, ConnectTime: time.Duration(w.ConnectMS) * time.Millisecond}
}

// AttemptStatus returns the state of a join attempt, to the client that
// created it or the owner of its listing; ErrNotFound to anyone else and
// for an attempt unknown or ended more than ten minutes ago.
func (a *API) AttemptStatus(ctx context.Context, attempt AttemptID) (*AttemptStatus, error) {
	if attempt.IsZero() {
		return nil, &InputError{Field: "attempt_id", Reason: "must name an attempt"}
	}
	var w struct {
		AttemptID     AttemptID    `json:"attempt_id"`
		ListingID     ListingID    `json:"listing_id"`
		State         AttemptState `json:"state"`
		Reason        string       `json:"reason"`
		RelayOnly     bool         `json:"relay_only"`
		ExpiresAt     time.Time    `json:"expires_at"`
		HostBound     bool         `json:"host_bound"`
		ClientBound   bool         `json:"client_bound"`
		HostRelayed   bool         `json:"host_relayed"`
		ClientRelayed bool         `json:"client_relayed"`
		HostOutcome   *wireOutcome `json:"host_outcome"`
		ClientOutcome *wireOutcome `json:"client_outcome"`
	}
	c := &call{op: "get attempt status", method: "GET", path: "/v1/join-attempts/" + attempt.String(), out: &w}
	if err := a.do(ctx, c); err != nil {
		return nil, err
	}
	if w.AttemptID != attempt || w.ListingID.IsZero() || w.State == "" {
		return nil, &ProtocolError{Op: c.op, Reason: "missing or mismatched attempt status"}
	}
	return &AttemptStatus{
		AttemptID: w.AttemptID, ListingID: w.ListingID, State: w.State, Reason: w.Reason,
		RelayOnly: w.RelayOnly, ExpiresAt: w.ExpiresAt,
		HostBound: w.HostBound, ClientBound: w.ClientBound, HostRelayed: w.HostRelayed, ClientRelayed: w.ClientRelayed,
		HostOutcome: w.HostOutcome.outcome(), ClientOutcome: w.ClientOutcome.outcome(),
	}, nil
}
