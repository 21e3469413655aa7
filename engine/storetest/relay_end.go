package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// wantGone requires a's status to be NotFound (for client and owner alike)
// and unchanged by asking.
func (e *env) wantGone(a engine.AttemptView, owner engine.Subject) {
	e.t.Helper()
	e.unchanged("status of a gone attempt", func() {
		for _, s := range []engine.Subject{a.Client, owner} {
			if _, r := e.status(a, s); r.Outcome != engine.NotFound {
				e.t.Fatalf("status of a gone attempt = %v, want not_found", r.Outcome)
			}
		}
		e.wantEndedByHandle(a, owner)
	})
}

// wantEndedByHandle requires a lookup of ended attempt a by its handle to
// be NotFound: only live attempts are found by handle.
func (e *env) wantEndedByHandle(a engine.AttemptView, owner engine.Subject) {
	e.t.Helper()
	_, r, err := e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: a.Tenant, Subject: owner, Handle: a.Handle})
	e.want("AttemptStatus of an ended attempt by handle", r, err, engine.NotFound)
}

func runRelayTombstones(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	// Expired, waiting for the host, with the client's outcome kept.
	waiting := e.attempt(v, "client-1")
	e.apply(bindOp(e.bindCmd(waiting, engine.RoleClient, otherPub(20), netipZero)))
	e.apply(reportOp(e.reportCmd(waiting, engine.RoleClient, engine.PathFailed, 7000)))
	// Expired after its relay introduction.
	done := e.attempt(v, "client-2")
	e.apply(bindOp(e.relayBind(done, engine.RoleClient, otherPub(21), relayed(5001))))
	e.apply(bindOp(e.relayBind(done, engine.RoleHost, pub(21), relayed(5002))))
	e.c.Advance(e.l.AttemptTTL)
	st := e.wantStatus(waiting, "publisher-1", engine.AttemptExpired, engine.ReasonAwaitingHostBind)
	if !st.ClientBound || st.HostBound || st.ClientOutcome != (engine.PunchOutcome{Path: engine.PathFailed, ConnectMillis: 7000}) {
		t.Fatalf("expired status lost its facts: %+v", st)
	}
	e.wantStatus(done, "publisher-1", engine.AttemptExpired, engine.ReasonRelayed)
	e.wantEndedByHandle(done, "publisher-1")
	e.wantUsed(engine.PoolAttempts, 0)
	e.unchanged("report for an expired attempt", func() {
		if op := e.apply(reportOp(e.reportCmd(waiting, engine.RoleHost, engine.PathFailed, 1))); op.Result.Outcome != engine.NotFound {
			t.Fatalf("report for an expired attempt = %v", op.Result.Outcome)
		}
		if r, err := e.s.MarkOffered(e.ctx, waiting.Handle); err != nil || r.Outcome != engine.NotFound {
			t.Fatalf("MarkOffered of an expired attempt = %v %v", r.Outcome, err)
		}
	})
	e.unchanged("stranger asks a tombstone", func() {
		if _, r, _ := e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: tenant, Subject: "client-9", Attempt: waiting.ID}); r.Outcome != engine.NotFound {
			t.Fatalf("a stranger reads a tombstone: %v", r.Outcome)
		}
	})

	// Failed: the listing deleted, its lease ended, a principal revoked.
	// (Times in seconds from the start: the first tombstones date from 30.)
	e.presence(v, 2, pub(40000))
	deleted := e.attempt(v, "client-3")
	r, err := e.s.DeleteListing(e.ctx, e.deleteCmd(v))
	e.want("DeleteListing", r, err, engine.Success)
	e.wantStatus(deleted, "publisher-1", engine.AttemptFailed, engine.ReasonListingRemoved)

	lapsed := e.visible("publisher-2")
	la := e.attempt(lapsed, "client-4") // ends at 60
	e.c.Advance(e.l.LeaseTTL - e.l.AttemptTTL/2)
	e.presence(lapsed, 2, pub(40000))
	lb := e.attempt(lapsed, "client-4") // outlived by the lease's end at 90
	e.c.Advance(e.l.AttemptTTL / 2)
	e.wantStatus(la, "publisher-2", engine.AttemptExpired, engine.ReasonAwaitingOffer)
	e.wantStatus(lb, "publisher-2", engine.AttemptFailed, engine.ReasonLeaseExpired)

	rv := e.visible("publisher-3")
	ra := e.attempt(rv, "client-5")
	rb := e.attempt(rv, "client-6")
	if _, r, err := e.s.RevokePrincipal(e.ctx, "client-5", time.Minute); err != nil || !r.OK() {
		t.Fatalf("RevokePrincipal = %v %v", r.Outcome, err)
	}
	e.wantStatus(ra, "publisher-3", engine.AttemptFailed, engine.ReasonRevoked)
	r, err = e.s.RevokeListing(e.ctx, engine.RevokeListing{Tenant: tenant, Listing: rv.ID})
	e.want("RevokeListing", r, err, engine.Success)
	e.wantStatus(rb, "publisher-3", engine.AttemptFailed, engine.ReasonRevoked)

	// Every tombstone goes TombstoneTTL after its attempt ended: at 630
	// for those of 30, at 690 for lb (its lease's end) and those revoked.
	e.c.Advance(engine.TombstoneTTL - time.Nanosecond)
	e.wantGone(waiting, "publisher-1")
	e.wantStatus(lb, "publisher-2", engine.AttemptFailed, engine.ReasonLeaseExpired)
	e.wantStatus(rb, "publisher-3", engine.AttemptFailed, engine.ReasonRevoked)
	e.c.Advance(time.Nanosecond)
	for _, a := range []engine.AttemptView{waiting, done, deleted, la, lb, ra, rb} {
		e.wantGone(a, "publisher-1")
	}

	// The end of a drain window fails what is left: drained.
	d := newEnv(t, f, func(l *engine.Limits) { l.DrainWindow = 5 * time.Second })
	dv := d.visible("publisher-1")
	da := d.attempt(dv, "client-1")
	if err := d.s.BeginDrain(d.ctx); err != nil {
		t.Fatal(err)
	}
	d.wantStatus(da, "publisher-1", engine.AttemptCreated, engine.ReasonAwaitingOffer)
	d.c.Advance(5 * time.Second)
	d.wantStatus(da, "publisher-1", engine.AttemptFailed, engine.ReasonDrained)
}

// runRelayTombstonesBounded: the tombstones never exceed the attempts
// ceiling (the oldest go first) and take nothing from the attempt pool.
func runRelayTombstonesBounded(t *testing.T, f Factory) {
	const ceiling = 4
	e := newEnv(t, f, func(l *engine.Limits) { l.MaxAttempts = ceiling; *l = l.DefaultShares() }, wholePools)
	v := e.visible("publisher-1")
	var ended []engine.AttemptView
	for round := 0; round < 3; round++ {
		for i := 0; i < ceiling; i++ {
			ended = append(ended, e.attempt(v, "client-1"))
		}
		e.c.Advance(e.l.AttemptTTL)
		nv, r, err := e.s.RenewLease(e.ctx, e.renewCmd(v))
		e.want("RenewLease", r, err, engine.Success)
		v = nv
		e.presence(v, uint64(round+2), pub(40000))
	}
	for i, a := range ended {
		if i < len(ended)-ceiling {
			e.wantGone(a, "publisher-1")
		} else {
			e.wantStatus(a, "publisher-1", engine.AttemptExpired, engine.ReasonAwaitingOffer)
		}
	}
	// The pool is whole: a full set of new attempts fits.
	for i := 0; i < ceiling; i++ {
		e.attempt(v, "client-2")
	}
}

// runRelayTombstonesPerTenant: one tenant's churn evicts only its own
// tombstones. The victim's ended attempts keep their status for
// TombstoneTTL while another tenant ends three times the ceiling, both
// tenants racing from their own goroutines.
func runRelayTombstonesPerTenant(t *testing.T, f Factory) {
	const ceiling = 4
	e := newEnv(t, f, func(l *engine.Limits) { l.MaxAttempts = ceiling }, wholePools)
	oc := e.listingCmd("victim-publisher")
	oc.Tenant = otherTenant
	victim := e.create(oc)
	e.presence(victim, 1, otherPub(1))
	kept := []engine.AttemptView{e.attempt(victim, "victim-client"), e.attempt(victim, "victim-client")}
	e.c.Advance(e.l.AttemptTTL) // both end: the victim holds two tombstones
	churn := e.visible("churn-publisher")
	// Every command is built before the race (the env is not goroutine-safe).
	var cmds []engine.CreateAttempt
	for i := 0; i < 3*ceiling; i++ {
		cmds = append(cmds, e.attemptCmd(churn, engine.Subject(fmt.Sprintf("churn-client-%d", i))))
	}
	var ended []engine.AttemptView
	for round := 0; round < 3; round++ {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range cmds[round*ceiling : (round+1)*ceiling] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a, r, err := e.s.CreateJoinAttempt(e.ctx, c)
				if err != nil || !r.OK() {
					t.Errorf("churn CreateJoinAttempt: %v %v", r, err)
					return
				}
				mu.Lock()
				ended = append(ended, a)
				mu.Unlock()
			}()
		}
		wg.Add(1)
		go func() { // the victim reads its statuses meanwhile
			defer wg.Done()
			for _, a := range kept {
				if _, r, err := e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: a.Tenant, Subject: a.Client, Attempt: a.ID}); err != nil || !r.OK() {
					t.Errorf("victim status during churn: %v %v", r, err)
				}
			}
		}()
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		e.c.Advance(e.l.AttemptTTL)
		nv, r, err := e.s.RenewLease(e.ctx, e.renewCmd(churn))
		e.want("RenewLease", r, err, engine.Success)
		churn = nv
		e.presence(churn, uint64(round+2), pub(40000))
	}
	e.check()
	// The churning tenant holds its own ceiling of tombstones, the victim
	// every one of its own.
	gone := 0
	for _, a := range ended {
		if _, r := e.status(a, a.Client); r.Outcome == engine.NotFound {
			gone++
		}
	}
	if gone != len(ended)-ceiling {
		t.Fatalf("churning tenant: %d of %d statuses gone, want %d", gone, len(ended), len(ended)-ceiling)
	}
	for _, a := range kept {
		e.wantStatus(a, "victim-publisher", engine.AttemptExpired, engine.ReasonAwaitingOffer)
	}
	// Until their own lifetime: TombstoneTTL after they ended.
	e.c.Advance(engine.TombstoneTTL - 3*e.l.AttemptTTL - time.Nanosecond)
	for _, a := range kept {
		e.wantStatus(a, "victim-publisher", engine.AttemptExpired, engine.ReasonAwaitingOffer)
	}
	e.c.Advance(time.Nanosecond)
	for _, a := range kept {
		e.wantGone(a, "victim-publisher")
	}
}

func runRelayUnavailable(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	for _, ctx := range []context.Context{canceledCtx(), newFlipCtx()} {
		e.unchanged("cancelled relay calls", func() {
			_, err := e.s.MarkOffered(ctx, a.Handle)
			e.wantCanceled("MarkOffered", err)
		})
	}
	e.unchanged("cancelled status", func() {
		_, _, err := e.s.AttemptStatus(canceledCtx(), engine.GetAttempt{Tenant: tenant, Subject: "client-1", Attempt: a.ID})
		e.wantCanceled("AttemptStatus", err)
	})
	b := e.attempt(v, "client-2")
	e.c.Advance(e.l.AttemptTTL / 2)
	e.attempt(v, "client-3")
	e.c.Advance(e.l.AttemptTTL / 2) // a and b end, leaving tombstones
	e.s.MarkUnavailable()
	e.check()
	e.unchanged("relay calls on an unavailable store", func() {
		r, err := e.s.MarkOffered(e.ctx, a.Handle)
		e.want("MarkOffered unavailable", r, err, engine.ServiceUnavailable)
		for _, x := range []engine.AttemptView{a, b} {
			_, r, err = e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: tenant, Subject: x.Client, Attempt: x.ID})
			e.want("AttemptStatus unavailable", r, err, engine.ServiceUnavailable)
		}
		op := e.apply(reportOp(e.reportCmd(a, engine.RoleClient, engine.PathDirect, 1)))
		e.want("outcome report unavailable", op.Result, op.Err, engine.ServiceUnavailable)
	})
}

func runRelayUnsupported(t *testing.T, f Factory) {
	e := newEnv(t, f)
	v := e.visible("publisher-1")
	a := e.attempt(v, "client-1")
	want := func(op string, err error) {
		t.Helper()
		var ue *engine.UnsupportedError
		if !errors.As(err, &ue) {
			t.Fatalf("%s: error %v, want *engine.UnsupportedError", op, err)
		}
	}
	e.unchanged("relay entry points without relay", func() {
		lc := e.listingCmd("publisher-1")
		lc.Spec.RelayOnlyJoins = true
		_, _, err := e.s.CreateListing(e.ctx, lc)
		want("CreateListing relay_only_joins", err)
		_, _, err = e.s.CreateJoinAttempt(e.ctx, e.relayOnlyCmd(v, "client-2"))
		want("CreateJoinAttempt relay_only", err)
		c := e.relayBind(a, engine.RoleClient, otherPub(20), relayed(5001))
		_, _, err = e.s.BindAttemptEndpoint(e.ctx, c)
		want("BindAttemptEndpoint relayed", err)
		want("ApplyBatch bind relayed", e.apply(bindOp(c)).Err)
		want("ApplyBatch outcome", e.apply(reportOp(e.reportCmd(a, engine.RoleClient, engine.PathDirect, 1))).Err)
		_, err = e.s.MarkOffered(e.ctx, a.Handle)
		want("MarkOffered", err)
		_, _, err = e.s.AttemptStatus(e.ctx, engine.GetAttempt{Tenant: tenant, Subject: "client-1", Attempt: a.ID})
		want("AttemptStatus", err)
	})
	// Bad input is still an InputError first.
	e.unchanged("bad relay input without relay", func() {
		op := e.apply(reportOp(engine.PunchReport{Handle: a.Handle, Role: engine.RoleClient, Path: 9}))
		e.wantInput("ApplyBatch outcome", op.Err, "path")
	})
}
