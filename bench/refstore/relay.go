package refstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// The reference store has no relay fallback: no relay-only listings or
// attempts, relayed candidates, outcome reports, offer marks or attempt
// status. Each answers *engine.UnsupportedError (after the input checks
// every store makes) and changes nothing; the contract suite runs its relay
// cases on the reference with storetest.WithoutRelay.

var errNoRelay = &engine.UnsupportedError{Feature: "the relay fallback"}

func (s *Store) MarkOffered(ctx context.Context, h engine.Handle) (engine.Result, error) {
	if err := ctx.Err(); err != nil {
		return engine.Result{}, err
	}
	return engine.Result{}, errNoRelay
}

func (s *Store) AttemptStatus(ctx context.Context, q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error) {
	if err := engine.ValidateGetAttempt(&q); err != nil {
		return engine.AttemptStatus{}, engine.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return engine.AttemptStatus{}, engine.Result{}, err
	}
	return engine.AttemptStatus{}, engine.Result{}, errNoRelay
}
