package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

var errCanceled = context.Canceled

func canceledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// flipCtx is a context whose Err is nil on its first call and Canceled on
// every later one: a store that checks before taking the commit lock and
// again after acquiring it sees the cancellation at the second check, the
// "cancelled while waiting for the lock" case. Done never closes, so only a
// store that calls Err after acquiring the lock notices.
type flipCtx struct {
	calls atomic.Int32
	done  chan struct{}
}

func newFlipCtx() *flipCtx { return &flipCtx{done: make(chan struct{})} }

func (c *flipCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *flipCtx) Done() <-chan struct{}       { return c.done }
func (c *flipCtx) Value(any) any               { return nil }
func (c *flipCtx) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

// transitions lists every ctx-taking Store method as a closure over a fresh
// valid command, so each can be run with a cancelled context. Each would
// change the store if it ran.
func (e *env) transitions() []struct {
	name string
	read bool
	run  func(ctx context.Context) error
} {
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	b := e.attempt(v, "client-2")
	e.bind(e.bindCmd(b, engine.RoleHost, pub(1), netipZero))
	e.bind(e.bindCmd(b, engine.RoleClient, pub(2), netipZero))
	type tr = struct {
		name string
		read bool // a read without effect; may check ctx only once
		run  func(ctx context.Context) error
	}
	return []tr{
		{"CreateListing", false, func(ctx context.Context) error {
			_, _, err := e.s.CreateListing(ctx, e.listingCmd("publisher-1"))
			return err
		}},
		{"RenewLease", false, func(ctx context.Context) error { _, _, err := e.s.RenewLease(ctx, e.renewCmd(v)); return err }},
		{"DeleteListing", false, func(ctx context.Context) error { _, err := e.s.DeleteListing(ctx, e.deleteCmd(v)); return err }},
		{"GetListing", true, func(ctx context.Context) error {
			_, _, err := e.s.GetListing(ctx, engine.GetListing{Tenant: tenant, Listing: v.ID})
			return err
		}},
		{"BrowseVisible", true, func(ctx context.Context) error {
			_, _, _, err := e.s.BrowseVisible(ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10}, nil)
			return err
		}},
		{"BindHostPresence", false, func(ctx context.Context) error {
			_, _, err := e.s.BindHostPresence(ctx, e.presenceCmd(v, 9, otherPub(9)))
			return err
		}},
		{"CreateJoinAttempt", false, func(ctx context.Context) error {
			_, _, err := e.s.CreateJoinAttempt(ctx, e.attemptCmd(v, "client-3"))
			return err
		}},
		{"BindAttemptEndpoint", false, func(ctx context.Context) error {
			_, _, err := e.s.BindAttemptEndpoint(ctx, e.bindCmd(a, engine.RoleClient, pub(3), netipZero))
			return err
		}},
		{"ConsumeIntroduction", false, func(ctx context.Context) error { _, _, err := e.s.ConsumeIntroduction(ctx, b.Handle); return err }},
		{"Introduction", true, func(ctx context.Context) error { _, _, err := e.s.Introduction(ctx, b.Handle); return err }},
		{"ConsumeReplay", false, func(ctx context.Context) error {
			_, err := e.s.ConsumeReplay(ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"})
			return err
		}},
		{"RevokeListing", false, func(ctx context.Context) error {
			_, err := e.s.RevokeListing(ctx, engine.RevokeListing{Tenant: tenant, Listing: v.ID})
			return err
		}},
		{"RevokePrincipal", false, func(ctx context.Context) error {
			_, _, err := e.s.RevokePrincipal(ctx, "publisher-1", time.Minute)
			return err
		}},
		{"RevokeTenantPrincipal", false, func(ctx context.Context) error {
			_, _, err := e.s.RevokeTenantPrincipal(ctx, tenant, "publisher-1", time.Minute)
			return err
		}},
		{"Revoked", true, func(ctx context.Context) error { _, err := e.s.Revoked(ctx, "publisher-1"); return err }},
		{"RevokedInTenant", true, func(ctx context.Context) error {
			_, err := e.s.RevokedInTenant(ctx, tenant, "publisher-1")
			return err
		}},
		{"BeginDrain", false, func(ctx context.Context) error { return e.s.BeginDrain(ctx) }},
		{"ApplyBatch", false, func(ctx context.Context) error {
			ops := []engine.Op{
				{Kind: engine.OpPresence, Presence: e.presenceCmd(v, 10, otherPub(10))},
				{Kind: engine.OpBindAttempt, Bind: e.bindCmd(a, engine.RoleHost, pub(4), netipZero)},
			}
			// Sentinel results: a cancelled batch runs no op, so fills in nothing.
			ops[0].Result.Outcome, ops[1].Result.Outcome = engine.Revoked, engine.Revoked
			before := [2]engine.Op{ops[0], ops[1]}
			err := e.s.ApplyBatch(ctx, ops)
			if err != nil && (ops[0] != before[0] || ops[1] != before[1]) {
				e.t.Fatalf("cancelled ApplyBatch filled in op results")
			}
			return err
		}},
	}
}

// runCancel checks that a context cancelled before the call, or observed as
// cancelled only after the lock is taken, makes every transition return
// context.Canceled and change nothing.
func runCancel(t *testing.T, f Factory) {
	t.Run("BeforeCall", func(t *testing.T) {
		e := newEnv(t, f)
		for _, tr := range e.transitions() {
			e.unchanged("cancelled "+tr.name, func() {
				e.wantCanceled(tr.name, tr.run(canceledCtx()))
			})
		}
		if e.s.Draining() {
			t.Fatalf("cancelled BeginDrain started a drain")
		}
	})

	t.Run("AfterLock", func(t *testing.T) {
		e := newEnv(t, f)
		for _, tr := range e.transitions() {
			if tr.read {
				continue
			}
			e.unchanged("cancelled-after-lock "+tr.name, func() {
				ctx := newFlipCtx()
				e.wantCanceled(tr.name+" (Err flips on its second call)", tr.run(ctx))
			})
		}
		if e.s.Draining() {
			t.Fatalf("cancelled BeginDrain started a drain")
		}
	})
}
