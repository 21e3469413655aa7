package storetest

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runDrain checks the drain window: new work refused, in-flight attempts
// completing, then everything cleared at the deadline.
func runDrain(t *testing.T, f Factory) {
	t.Run("WindowThenClear", func(t *testing.T) {
		e := newEnv(t, f, func(l *engine.Limits) { l.DrainWindow = 10 * time.Second })
		v := e.visible("publisher-1")
		gone := e.visible("publisher-2")
		a := e.attempt(v, "client-1")
		b := e.attempt(v, "client-2")
		r0, err := e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"})
		e.want("ConsumeReplay", r0, err, engine.Success)
		if e.s.Draining() {
			t.Fatalf("Draining before BeginDrain")
		}
		if err := e.s.BeginDrain(e.ctx); err != nil {
			t.Fatal(err)
		}
		if !e.s.Draining() || !e.s.Stats().Draining || !e.s.Available() {
			t.Fatalf("after BeginDrain: Draining=%v Available=%v", e.s.Draining(), e.s.Available())
		}
		e.unchanged("new work while draining", func() {
			_, r, err := e.s.CreateListing(e.ctx, e.listingCmd("publisher-3"))
			e.want("CreateListing while draining", r, err, engine.Draining)
			_, r, err = e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-3"))
			e.want("CreateJoinAttempt while draining", r, err, engine.Draining)
			_, r, err = e.s.RenewLease(e.ctx, e.renewCmd(v))
			e.want("RenewLease while draining", r, err, engine.Draining)
			if err := e.s.BeginDrain(e.ctx); err != nil {
				t.Fatal(err)
			}
		})
		// In-flight work completes: binds, introductions, heartbeats, reads, deletes.
		e.c.Advance(5 * time.Second)
		e.presence(v, 2, pub(40000))
		e.bind(e.bindCmd(a, engine.RoleHost, pub(1), netipZero))
		e.bind(e.bindCmd(a, engine.RoleClient, pub(2), netipZero))
		_, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle)
		e.want("ConsumeIntroduction while draining", r, err, engine.Success)
		e.wantGet(v.ID, true, engine.Success)
		items, _, r, err := e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10}, nil)
		e.want("BrowseVisible while draining", r, err, engine.Success)
		if len(items) != 2 {
			t.Fatalf("browse while draining: %d items, want 2", len(items))
		}
		r, err = e.s.DeleteListing(e.ctx, e.deleteCmd(gone))
		e.want("DeleteListing while draining", r, err, engine.Success)
		e.c.Advance(5*time.Second - time.Nanosecond)
		e.wantAttempt(b.Handle, true, "attempt cleared before the drain deadline")
		e.c.Advance(time.Nanosecond)
		e.wantGet(v.ID, false, engine.NotFound)
		e.wantAttempt(b.Handle, false, "attempt survives the drain deadline")
		st := e.s.Stats()
		for _, p := range []engine.Pool{engine.PoolListings, engine.PoolPresence, engine.PoolAttempts, engine.PoolReplay, engine.PoolIdempotency} {
			if st.Pools[p-1].Used != 0 {
				t.Fatalf("pool %v holds %d after the drain window", p, st.Pools[p-1].Used)
			}
		}
		if st.InFlight != 0 || !st.Draining || !e.s.Draining() {
			t.Fatalf("after drain: inflight %d draining %v", st.InFlight, st.Draining)
		}
		_, r, err = e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 3, pub(40000)))
		e.want("presence after the drain window", r, err, engine.NotFound)
		_, r, err = e.s.CreateListing(e.ctx, e.listingCmd("publisher-3"))
		e.want("CreateListing after the drain window", r, err, engine.Draining)
		e.check()
	})
}

// runUnavailable checks fail-closed behaviour after MarkUnavailable.
func runUnavailable(t *testing.T, f Factory) {
	t.Run("EveryTransitionFailsClosed", func(t *testing.T) {
		e := newEnv(t, f)
		v := e.visible("publisher-1")
		a := e.attempt(v, "client-1")
		e.bind(e.bindCmd(a, engine.RoleHost, pub(1), netipZero))
		e.bind(e.bindCmd(a, engine.RoleClient, pub(2), netipZero))
		cmd := e.listingCmd("publisher-1")
		e.s.MarkUnavailable()
		e.s.MarkUnavailable() // idempotent
		if e.s.Available() || e.s.Stats().Available {
			t.Fatalf("Available after MarkUnavailable")
		}
		st := e.s.Stats()
		for p := engine.PoolListings; p <= engine.PoolAttempts; p++ {
			if st.Pools[p-1].Used != 0 {
				t.Fatalf("pool %v holds %d after MarkUnavailable", p, st.Pools[p-1].Used)
			}
		}
		e.wantAttempt(a.Handle, false, "AttemptHost finds an attempt of an unavailable store")
		calls := []struct {
			name string
			run  func() (engine.Result, error)
		}{
			{"CreateListing", func() (engine.Result, error) { _, r, err := e.s.CreateListing(e.ctx, cmd); return r, err }},
			{"RenewLease", func() (engine.Result, error) { _, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v)); return r, err }},
			{"DeleteListing", func() (engine.Result, error) { return e.s.DeleteListing(e.ctx, e.deleteCmd(v)) }},
			{"GetListing", func() (engine.Result, error) {
				_, r, err := e.s.GetListing(e.ctx, engine.GetListing{Tenant: tenant, Listing: v.ID})
				return r, err
			}},
			{"BrowseVisible", func() (engine.Result, error) {
				_, _, r, err := e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 1}, nil)
				return r, err
			}},
			{"BindHostPresence", func() (engine.Result, error) {
				_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 2, pub(1)))
				return r, err
			}},
			{"CreateJoinAttempt", func() (engine.Result, error) {
				_, r, err := e.s.CreateJoinAttempt(e.ctx, e.attemptCmd(v, "client-2"))
				return r, err
			}},
			{"BindAttemptEndpoint", func() (engine.Result, error) {
				_, r, err := e.s.BindAttemptEndpoint(e.ctx, e.bindCmd(a, engine.RoleClient, pub(2), netipZero))
				return r, err
			}},
			{"ConsumeIntroduction", func() (engine.Result, error) { _, r, err := e.s.ConsumeIntroduction(e.ctx, a.Handle); return r, err }},
			{"Introduction", func() (engine.Result, error) { _, r, err := e.s.Introduction(e.ctx, a.Handle); return r, err }},
			{"ConsumeReplay", func() (engine.Result, error) {
				return e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k"})
			}},
			{"RevokeListing", func() (engine.Result, error) {
				return e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: tenant, Listing: v.ID})
			}},
			{"RevokePrincipal", func() (engine.Result, error) {
				_, r, err := e.s.RevokePrincipal(e.ctx, "publisher-1", time.Minute)
				return r, err
			}},
			{"ApplyBatch", func() (engine.Result, error) {
				ops := []engine.Op{
					{Kind: engine.OpPresence, Presence: e.presenceCmd(v, 3, pub(1))},
					{Kind: engine.OpBindAttempt, Bind: e.bindCmd(a, engine.RoleHost, pub(1), netipZero)},
				}
				if err := e.s.ApplyBatch(e.ctx, ops); err != nil {
					return engine.Result{}, err
				}
				if ops[0].Result != ops[1].Result || ops[0].Err != nil || ops[1].Err != nil {
					t.Errorf("batched ops on an unavailable store differ: %v %v", ops[0].Result.Outcome, ops[1].Result.Outcome)
				}
				return ops[1].Result, nil
			}},
		}
		for _, c := range calls {
			e.unchanged("unavailable "+c.name, func() {
				r, err := c.run()
				if err != nil || r.Outcome != engine.ServiceUnavailable {
					t.Errorf("%s on an unavailable store = %v, %v; want service_unavailable", c.name, r.Outcome, err)
				}
			})
		}
	})
}
