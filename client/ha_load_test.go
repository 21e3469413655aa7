package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/haevidence"
)

// The fault scenarios' client side: two tenants' principals, a concurrent
// mixed load of SDK clients that records every answer by its typed
// outcome, and the scenario's ha-evidence line (docs/benchmarks/ha.md).

// haTenants writes a principals file with two tenants, demo/dev and
// rival/dev, each with a publisher and a client, and a global operator;
// it returns the file and the tokens by role ("publisher", "client",
// "rival-publisher", "rival-client", "operator").
func haTenants(t *testing.T) (string, map[string]string) {
	t.Helper()
	tokens := map[string]string{}
	var entries []e2e.Principal
	for _, p := range []struct{ name, game, role string }{
		{"publisher", "demo", "publisher"}, {"client", "demo", "client"},
		{"rival-publisher", "rival", "publisher"}, {"rival-client", "rival", "client"},
		{"operator", "*", "operator"},
	} {
		tok := "ha-test-" + p.name + "-token-0123456789"
		tokens[p.name] = tok
		env := "dev"
		if p.game == "*" {
			env = "*"
		}
		entries = append(entries, e2e.NewPrincipal("ha-"+p.name, p.game, env, p.role, tok))
	}
	file := e2e.WritePrincipalsFile(t, entries)
	return file, tokens
}

// outcome names an SDK call's result as the contract types it: "success",
// the problem code of an HTTP answer, "mediator_<code>" for a STUN error,
// "no_introduction" when the mediator never introduced before the
// attempt's end (a dead mediator answers nothing), and "untyped" for
// anything else: a transport error, no answer in time, a status without a
// problem code, an answer the SDK could not read.
func outcome(err error) string {
	var ae *APIError
	var me *MediatorError
	switch {
	case err == nil:
		return "success"
	case errors.As(err, &ae) && !ae.Inferred:
		return ae.Code
	case errors.As(err, &me):
		return fmt.Sprintf("mediator_%d", me.Code)
	case errors.Is(err, ErrIntroduceTimeout):
		return "no_introduction"
	}
	return "untyped"
}

// haFigures is what a scenario counts; safe for concurrent use.
type haFigures struct {
	// Load runs the workers and counts the answers by outcome, with the
	// first few untyped errors ("untyped") and typed answers the call may
	// not get here ("unwanted"), for the failure message.
	*haevidence.Load
	mu        sync.Mutex
	cross     int64 // another tenant's listing seen
	double    int64 // an attempt introduced twice to its host
	breaches  int64 // a pool above its ceiling
	lost      int64 // an admitted listing gone
	recovery  time.Duration
	recovered bool
}

func newHAFigures() *haFigures { return &haFigures{Load: haevidence.NewLoad("untyped")} }

func (f *haFigures) answer(err error) {
	o := outcome(err)
	f.Count(o)
	if o == "untyped" {
		f.Example("untyped", err.Error(), 5)
	}
}

// expect counts err's outcome and records it as unwanted unless it is one
// of allowed (success when none is given).
func (f *haFigures) expect(what string, err error, allowed ...string) {
	f.answer(err)
	o := outcome(err)
	if len(allowed) == 0 {
		allowed = []string{"success"}
	}
	if o == "untyped" || slices.Contains(allowed, o) {
		return
	}
	f.Example("unwanted", what+": "+err.Error(), 5)
}

func (f *haFigures) add(n *int64) {
	f.mu.Lock()
	*n++
	f.mu.Unlock()
}

// ceilings counts the pools above their ceiling in an instance's stats.
func (f *haFigures) ceilings(ctx context.Context, t *testing.T, operator *API) {
	st, err := operator.Stats(ctx)
	f.expect("stats", err)
	if err != nil {
		return
	}
	for name, p := range st.Pools {
		if p.Ceiling > 0 && p.Used > p.Ceiling {
			t.Errorf("pool %s above its ceiling on %s: %d > %d", name, st.InstanceID, p.Used, p.Ceiling)
			f.add(&f.breaches)
		}
	}
}

// report asserts the safety figures (every answer typed, no cross-tenant
// read, no double introduction, no ceiling breach, nothing admitted lost)
// and logs the scenario's evidence line.
func (f *haFigures) report(t *testing.T, scenario, description string, bound time.Duration) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.N("untyped"); n > 0 {
		t.Errorf("%d untyped answers, e.g. %v", n, f.Examples("untyped"))
	}
	if unwanted := f.Examples("unwanted"); len(unwanted) > 0 {
		t.Errorf("typed answers the surviving instances should not give, e.g. %v", unwanted)
	}
	for _, c := range []struct {
		n    int64
		what string
	}{{f.cross, "cross-tenant reads"}, {f.double, "double introductions"}, {f.breaches, "ceiling breaches"}, {f.lost, "admitted listings lost"}} {
		if c.n != 0 {
			t.Errorf("%d %s", c.n, c.what)
		}
	}
	rec := haevidence.Record{Scenario: scenario, Description: description, Answers: f.Answers(),
		LostAdmitted: f.lost, DoubleIntroductions: f.double, CeilingBreaches: f.breaches, CrossTenantReads: f.cross}
	rec.SetTimes(f.recovery, bound)
	if !f.recovered {
		rec.RecoveryS = nil
	}
	rec.Log(t)
}

// haTenant is one tenant's side of the load: its client API on each
// surviving instance and its listings (the other tenant's are what it must
// never see).
type haTenant struct {
	clients []*API
	own     []ListingID
	others  map[ListingID]bool
	other   []ListingID
}

// run drives the tenant's mixed load until stop: browsing (every listing
// seen must be its own), reading another tenant's listing (must be
// not_found), and full joins of its own listings (create the attempt over
// HTTP, bind, be introduced), each through the surviving instances in turn.
func (tn *haTenant) run(ctx context.Context, f *haFigures) {
	pv := goodSpec().ProtocolVersion
	f.Every(20*time.Millisecond, func(i int) {
		items, _, err := tn.clients[i%len(tn.clients)].BrowsePage(ctx, BrowseQuery{ProtocolVersion: pv}, "")
		f.expect("browse", err)
		for _, l := range items {
			if tn.others[l.ListingID] {
				f.add(&f.cross)
			}
		}
	})
	f.Every(50*time.Millisecond, func(i int) {
		_, err := tn.clients[i%len(tn.clients)].GetListing(ctx, tn.other[i%len(tn.other)])
		f.expect("another tenant's listing", err, "not_found", "success") // a success is counted as a cross-tenant read
		if err == nil {
			f.add(&f.cross)
		}
	})
	f.Every(100*time.Millisecond, func(i int) {
		j, err := NewJoiner(JoinerConfig{API: tn.clients[i%len(tn.clients)], ProtocolVersion: pv, ListenAddr: "127.0.0.1:0"})
		if err != nil {
			f.expect("joiner", err)
			return
		}
		defer j.Close()
		jctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		// An attempt that named the killed mediator (its host had not
		// moved yet) gets no introduction; the client joins again.
		_, err = j.Join(jctx, tn.own[i%len(tn.own)])
		if errors.Is(err, context.DeadlineExceeded) && j.Socket() != nil {
			// The attempt was created (the socket is set then) and the
			// deadline ran out waiting for the introduction.
			err = fmt.Errorf("%w: %w", ErrIntroduceTimeout, err)
		}
		f.expect("join", err, "success", "no_introduction")
	})
}

// accept takes every introduction a Publisher's host side gets until the
// load halts, counting an attempt introduced twice.
func (f *haFigures) accept(ctx context.Context, pub *Publisher) {
	f.Go(func() {
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-f.Done():
				cancel()
			case <-actx.Done():
			}
		}()
		seen := map[Handle]bool{}
		for {
			in, err := pub.Accept(actx)
			if err != nil {
				return
			}
			if seen[in.Attempt] {
				f.add(&f.double)
			}
			seen[in.Attempt] = true
		}
	})
}
