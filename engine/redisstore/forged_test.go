package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// TestMadeUpAttemptHandleCostsNoRedisCall: AttemptHost, which the mediator
// asks before it can verify a host's attempt datagram, answers a handle
// the store never made without calling Redis; a real one costs one call.
func TestMadeUpAttemptHandleCostsNoRedisCall(t *testing.T) {
	e := newFaultEnv(t, 0)
	a := e.attempt(false)
	calls := func() int { return functionCalls(t, e.c) }
	before := calls()
	for i := 0; i < 1000; i++ {
		if _, ok := e.s.AttemptHost(engine.Handle{UUID: engine.NewUUID()}); ok {
			t.Fatalf("a made-up attempt handle has a host")
		}
	}
	if got := calls() - before; got != 0 {
		t.Fatalf("1,000 made-up handles cost %d Redis calls, want 0", got)
	}
	if h, ok := e.s.AttemptHost(a.Handle); !ok || h != e.v.Presence {
		t.Fatalf("AttemptHost of a real attempt = %v, %v", h, ok)
	}
	if got := calls() - before; got != 1 {
		t.Fatalf("a real handle cost %d Redis calls, want 1", got)
	}
}

// attempt is a join attempt on the env's listing (relay-only or not) that
// must be created.
func (e *faultEnv) attempt(relayOnly bool) engine.AttemptView {
	e.t.Helper()
	a, r, err := e.s.CreateJoinAttempt(context.Background(), engine.CreateAttempt{Tenant: e.v.Tenant, Client: "c",
		IdempotencyKey: "j", Listing: e.v.ID, ProtocolVersion: 1, RelayOnly: relayOnly})
	if err != nil || !r.OK() || a.RelayOnly != relayOnly {
		e.t.Fatalf("CreateJoinAttempt: %v %v (relay-only %v)", r.Outcome, err, a.RelayOnly)
	}
	return a
}
