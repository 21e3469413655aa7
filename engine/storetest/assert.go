package storetest

import (
	"errors"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// want requires a transition to return outcome o without error.
func (e *env) want(op string, r engine.Result, err error, o engine.Outcome) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("%s: unexpected error %v (want outcome %v)", op, err, o)
	}
	if r.Outcome != o {
		e.t.Fatalf("%s = %v (pool %v), want %v", op, r.Outcome, r.Pool, o)
	}
	if o != engine.CapacityExceeded && r.Pool != engine.PoolNone {
		e.t.Fatalf("%s = %v carries pool %v; Pool is only set on CapacityExceeded", op, r.Outcome, r.Pool)
	}
}

// wantShed requires CapacityExceeded naming pool p, with Quota() true exactly
// for policy quotas.
func (e *env) wantShed(op string, r engine.Result, err error, p engine.Pool) {
	e.t.Helper()
	e.want(op, r, err, engine.CapacityExceeded)
	if r.Pool != p {
		e.t.Fatalf("%s: CapacityExceeded names pool %v, want %v", op, r.Pool, p)
	}
	if r.Quota() != p.IsQuota() {
		e.t.Fatalf("%s: Quota() = %v for pool %v", op, r.Quota(), p)
	}
	if r.Replay {
		e.t.Fatalf("%s: CapacityExceeded reported Replay", op)
	}
}

// wantInput requires an *engine.InputError whose Field contains one of
// fields (case-insensitively): stores may name a field "public" or
// "public_endpoint", but they must name it.
func (e *env) wantInput(op string, err error, fields ...string) {
	e.t.Helper()
	var ie *engine.InputError
	if !errors.As(err, &ie) {
		e.t.Fatalf("%s: error %v (%T), want *engine.InputError naming %q", op, err, err, fields)
	}
	got := strings.ToLower(ie.Field)
	for _, f := range fields {
		if strings.Contains(got, strings.ToLower(f)) {
			return
		}
	}
	e.t.Fatalf("%s: InputError names field %q, want one of %q", op, ie.Field, fields)
}

// wantCanceled requires err to be context.Canceled.
func (e *env) wantCanceled(op string, err error) {
	e.t.Helper()
	if !errors.Is(err, errCanceled) {
		e.t.Fatalf("%s: error %v, want context.Canceled", op, err)
	}
}

func asInput(err error, ie **engine.InputError) bool { return errors.As(err, ie) }

// shedListing requires CreateListing(cmd) to be shed on pool p and to leave
// the store unchanged (what names the case in a failure).
func (e *env) shedListing(what string, cmd engine.CreateListing, p engine.Pool) {
	e.t.Helper()
	e.unchanged(what, func() {
		_, r, err := e.s.CreateListing(e.ctx, cmd)
		e.wantShed("CreateListing", r, err, p)
	})
}

// shedAttempt is shedListing for CreateJoinAttempt.
func (e *env) shedAttempt(what string, cmd engine.CreateAttempt, p engine.Pool) {
	e.t.Helper()
	e.unchanged(what, func() {
		_, r, err := e.s.CreateJoinAttempt(e.ctx, cmd)
		e.wantShed("CreateJoinAttempt", r, err, p)
	})
}

// shedCreates requires both a CreateListing and a CreateJoinAttempt to be
// shed on pool p, changing nothing.
func (e *env) shedCreates(what string, lc engine.CreateListing, ac engine.CreateAttempt, p engine.Pool) {
	e.t.Helper()
	e.unchanged(what, func() {
		_, r, err := e.s.CreateListing(e.ctx, lc)
		e.wantShed("CreateListing", r, err, p)
		_, r, err = e.s.CreateJoinAttempt(e.ctx, ac)
		e.wantShed("CreateJoinAttempt", r, err, p)
	})
}

// wantAttempt requires AttemptHost to find the attempt of h (alive) or not;
// why says what went wrong when it does not.
func (e *env) wantAttempt(h engine.Handle, alive bool, why string) {
	e.t.Helper()
	if _, ok := e.s.AttemptHost(h); ok != alive {
		e.t.Fatalf("%s", why)
	}
}

// wantCascade requires what (a revocation) to have removed the gone
// listings and attempts and kept the listing and attempt it must not touch.
func (e *env) wantCascade(what string, gone []engine.ListingID, goneAttempts []engine.Handle, kept engine.ListingID, keptAttempt engine.Handle) {
	e.t.Helper()
	for _, id := range gone {
		e.wantGet(id, false, engine.NotFound)
	}
	e.wantGet(kept, true, engine.Success)
	for _, h := range goneAttempts {
		e.wantAttempt(h, false, what+" left an attempt it removes")
	}
	e.wantAttempt(keptAttempt, true, what+" removed an attempt it keeps")
}

// revoke revokes subject for a minute and requires Success with removed
// listings and attempts counted.
func (e *env) revoke(subject engine.Subject, removed int) {
	e.t.Helper()
	n, r, err := e.s.RevokePrincipal(e.ctx, subject, time.Minute)
	e.want("RevokePrincipal", r, err, engine.Success)
	if n != removed {
		e.t.Fatalf("RevokePrincipal(%s) removed %d, want %d", subject, n, removed)
	}
}

// wantBind requires a bind to answer o; what names the bind in a failure.
func (e *env) wantBind(cmd engine.BindAttempt, o engine.Outcome, what string) {
	e.t.Helper()
	if _, r := e.bind(cmd); r.Outcome != o {
		e.t.Fatalf("%s = %v, want %v", what, r.Outcome, o)
	}
}
