package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// errNoRelay answers the relay entry points until the relay transitions
// land in this store.
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
