package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// Several instances on one Redis (--store redis): each registers in the
// deployment's instance registry with its advertised mediator address and
// a lease of --instance-lease (see engine/redisstore/registry.go).
const (
	defaultInstanceLease = 3 * time.Second
	minInstanceLease     = time.Second
	maxInstanceLease     = time.Minute
)

// joinDeployment registers the instance with the mediator address it
// advertises, when the store has a registry (--store redis).
func (s *server) joinDeployment() error {
	rs, ok := s.store.(*redisstore.Store)
	if !ok || rs.InstanceLease() <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
	defer cancel()
	if err := rs.Register(ctx, s.mediatorAddr); err != nil {
		return err
	}
	s.instance = rs
	// The operator's drain is kept in Redis and outlives the processes that
	// began it: a process starting after its window ends it, and serves.
	// Registered first: the call is fenced like every other.
	if _, err := rs.EndDrain(ctx); err != nil {
		return fmt.Errorf("cannot end the deployment's drain: %w", err)
	}
	return nil
}

// leaveDeployment removes the registration, so the others route nothing
// more here (a no-op without a registry).
func (s *server) leaveDeployment() {
	if s.instance == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
	defer cancel()
	if err := s.instance.Leave(ctx); err != nil {
		s.log.Warn("cannot remove the instance registration; it lapses with its lease", "err", err)
	}
}

// drainInstance is SIGTERM's drain with a registry: this instance alone
// stops taking new listings and attempts (typed draining, /readyz 503) and
// no listing is routed to it any more, while it goes on serving datagrams
// so attempts under way complete: until none is in flight or the attempt
// lifetime (at most the drain window) has passed. The shared state is not
// drained (POST /v1/admin/drain drains the whole deployment). Then it
// leaves the registry: hosts whose presence it received re-resolve their
// mediator and move on.
func (s *server) drainInstance() {
	wait := min(s.limits.DrainWindow, s.limits.AttemptTTL)
	deadline := time.Now().Add(wait)
	s.log.Info("draining", "scope", "instance", "window", wait.String())
	ctx, cancel := context.WithTimeout(context.Background(), redisstore.DefaultTimeout)
	err := s.instance.DrainInstance(ctx)
	cancel()
	s.stats.Invalidate() // readiness says draining at once
	if err != nil {
		s.log.Warn("cannot mark the instance draining in the registry; it refuses new work anyway", "err", err)
	}
	reason, inFlight := waitDrained(s.store, deadline, drainPoll)
	s.leaveDeployment()
	s.log.Info("drain finished", "scope", "instance", "reason", reason, "in_flight", inFlight)
}
