package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// TestRelayCallsAreOneFunctionCallEach: every relay entry point is one
// FCALL, a batch of relayed binds and outcome reports too; a made-up
// handle (MarkOffered, AttemptStatus by handle) costs none.
func TestRelayCallsAreOneFunctionCallEach(t *testing.T) {
	e := newFaultEnv(t, 0)
	ctx := context.Background()
	a := e.attempt(true)
	pc := e.k.Presence(e.v.Presence)
	hc, cc := engine.HostAttemptCapability(&pc, a.Handle), e.k.AttemptClient(a.Handle)
	hk, ck := engine.FingerprintOf(&hc), engine.FingerprintOf(&cc)
	for _, c := range []struct {
		name  string
		calls int
		run   func() bool
	}{
		{"MarkOffered", 1, func() bool { r, err := e.s.MarkOffered(ctx, a.Handle); return err == nil && r.OK() }},
		{"MarkOffered of a made-up handle", 0, func() bool {
			r, err := e.s.MarkOffered(ctx, engine.Handle{UUID: engine.NewUUID()})
			return err == nil && r.Outcome == engine.NotFound
		}},
		{"BindAttemptEndpoint with a relayed address", 1, func() bool {
			_, r, err := e.s.BindAttemptEndpoint(ctx, engine.BindAttempt{Handle: a.Handle, Role: engine.RoleClient, Key: ck,
				Public: netipAP("198.51.100.20:5000"), Relayed: netipAP("192.0.2.50:6001")})
			return err == nil && r.OK()
		}},
		{"ApplyBatch (relayed bind, two outcome reports)", 1, func() bool {
			ops := []engine.Op{
				{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: a.Handle, Role: engine.RoleHost, Key: hk,
					Public: netipAP("203.0.113.10:4000"), Relayed: netipAP("192.0.2.50:6002")}},
				{Kind: engine.OpOutcome, Report: engine.PunchReport{Handle: a.Handle, Role: engine.RoleHost, Key: hk, Path: engine.PathRelayed, ConnectMillis: 800}},
				{Kind: engine.OpOutcome, Report: engine.PunchReport{Handle: a.Handle, Role: engine.RoleClient, Key: ck, Path: engine.PathRelayed, ConnectMillis: 900}},
			}
			err := e.s.ApplyBatch(ctx, ops)
			return err == nil && ops[0].FirstRelay && !ops[0].IntroReady && ops[1].Result.OK() && ops[2].Result.OK() && ops[2].Tenant == e.v.Tenant
		}},
		{"AttemptStatus", 1, func() bool {
			st, r, err := e.s.AttemptStatus(ctx, engine.GetAttempt{Tenant: e.v.Tenant, Subject: "publisher", Attempt: a.ID})
			return err == nil && r.OK() && st.State == engine.AttemptRelayed && st.ClientOutcome.ConnectMillis == 900
		}},
		{"AttemptStatus by handle", 1, func() bool {
			st, r, err := e.s.AttemptStatus(ctx, engine.GetAttempt{Tenant: e.v.Tenant, Subject: "c", Handle: a.Handle})
			return err == nil && r.OK() && st.Attempt == a.ID
		}},
		{"AttemptStatus by a made-up handle", 0, func() bool {
			_, r, err := e.s.AttemptStatus(ctx, engine.GetAttempt{Tenant: e.v.Tenant, Subject: "c", Handle: engine.Handle{UUID: engine.NewUUID()}})
			return err == nil && r.Outcome == engine.NotFound
		}},
	} {
		before := functionCalls(t, e.c)
		if !c.run() {
			t.Fatalf("%s did not succeed", c.name)
		}
		if got := functionCalls(t, e.c) - before; got != c.calls {
			t.Errorf("%s: %d function calls, want %d", c.name, got, c.calls)
		}
	}
}
