// Package storetest is the contract suite every engine.Store must pass: the
// in-memory store, the reference baseline in bench/refstore and, later, the
// Redis store. It ports every test of the reference store
// (docs/contracts/semantics.md#atomic-transitions) and adds exact-deadline
// expiry, capacity, idempotency, cancellation, input, race and randomized
// operation-sequence tests.
//
// A store that also implements engine.Inspector is checked more closely:
// CheckInvariants runs after every step of the randomized test, and every
// rejected call is bracketed by Snapshot to prove it changed nothing. Without
// an Inspector the suite falls back to comparing Stats. Snapshot must render
// the state as an operation at the current clock time sees it (after its
// expiry cleanup), or a rejected call that merely ran cleanup would look
// like a change.
//
// Where the contract leaves a choice open the suite accepts either answer
// and says so at the assertion (for example, which of two full pools a
// shed creation names, or whether Seq 0 is a Conflict or an InputError).
//
// The Relay group and the randomized model cover the relay fallback
// (relay-only joins, relayed candidates, the relay introduction, outcome
// reports, attempt status and tombstones); a store without it (the
// reference baseline) runs with WithoutRelay and must refuse each entry
// point with *engine.UnsupportedError.
//
// The suite is deterministic except for the race cases (goroutines
// contending on the store; their assertions hold for every interleaving)
// and makes no timing assertions. Run it with -race.
package storetest

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// Factory makes a fresh, empty store configured with l, reading time from c
// and deriving capabilities with k. It is called once per (sub)test.
type Factory func(t *testing.T, l engine.Limits, c *engine.ManualClock, k *engine.Keyring) engine.Store

// FactoryOf is the Factory of a store whose constructor takes just the
// limits, clock and keyring (memstore.New, refstore.New); its error fails the
// test.
func FactoryOf[S engine.Store](newStore func(engine.Limits, engine.Clock, *engine.Keyring) (S, error)) Factory {
	return func(t *testing.T, l engine.Limits, c *engine.ManualClock, k *engine.Keyring) engine.Store {
		t.Helper()
		s, err := newStore(l, c, k)
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		return s
	}
}

// Option adjusts the suite to a store's features.
type Option func(*options)

type options struct{ noRelay, noQuery bool }

// WithoutRelay is the capability flag of a store without the relay
// fallback (the reference baseline): the Relay group then only proves that
// every relay entry point answers *engine.UnsupportedError and changes
// nothing.
func WithoutRelay() Option { return func(o *options) { o.noRelay = true } }

// WithoutBrowseQuery is the capability flag of a store without indexed
// attributes, browse filters and orders, the Full refusal and quick join
// (the reference baseline): the Query group is skipped and the randomized
// test sets no attributes and never fills a listing. Every other store
// must implement engine.ItemBrowser and engine.QuickJoiner and pass it.
func WithoutBrowseQuery() Option { return func(o *options) { o.noQuery = true } }

// Run runs the whole contract suite against the stores newStore makes. Each
// case is a subtest, so `-run 'TestX/Idempotency'` selects a group.
func Run(t *testing.T, newStore Factory, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	runGroups(t, newStore, []group{
		{"Reference", runReference},
		{"Expiry", runExpiry},
		{"Capacity", runCapacity},
		{"Idempotency", runIdempotency},
		{"Lease", runLease},
		{"Presence", runPresence},
		{"Browse", runBrowse},
		{"Attempt", runAttempt},
		{"Batch", runBatch},
		{"Revocation", runRevocation},
		{"TenantRevocation", runTenantRevocation},
		{"TenantUsage", runTenantUsage},
		{"Drain", runDrain},
		{"Unavailable", runUnavailable},
		{"Stats", runStats},
		{"Input", runInput},
		{"Cancel", runCancel},
		{"Race", runRace},
		{"RandomOps", func(t *testing.T, f Factory) { runRandomOps(t, f, o) }},
		{"Relay", func(t *testing.T, f Factory) { runRelay(t, f, o) }},
		{"Query", func(t *testing.T, f Factory) { runQuery(t, f, o) }},
	})
}

// group is one named part of the suite: a subtest of its own.
type group struct {
	name string
	run  func(t *testing.T, f Factory)
}

// runGroups runs each group as a subtest, in order, on stores f makes.
func runGroups(t *testing.T, f Factory, groups []group) {
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) { g.run(t, f) })
	}
}

// env is one store under test with its clock, keyring and helpers.
type env struct {
	t    *testing.T
	s    engine.Store
	c    *engine.ManualClock
	k    *engine.Keyring
	l    engine.Limits
	insp engine.Inspector // nil when the store has none
	ctx  context.Context
	seq  int
}

// newEnv makes a store with the default limits changed by mods.
func newEnv(t *testing.T, f Factory, mods ...func(*engine.Limits)) *env {
	t.Helper()
	l := engine.DefaultLimits()
	for _, m := range mods {
		m(&l)
	}
	if err := l.Validate(); err != nil {
		t.Fatalf("BUG: test limits invalid: %v", err)
	}
	c := engine.NewManualClock()
	var key [32]byte
	for i := range key {
		key[i] = byte(i*7 + 1)
	}
	k := engine.NewKeyring(key)
	s := f(t, l, c, k)
	if s == nil {
		t.Fatalf("factory returned a nil store")
	}
	e := &env{t: t, s: s, c: c, k: k, l: l, ctx: context.Background()}
	e.insp, _ = s.(engine.Inspector)
	e.check()
	return e
}

// wholePools is a newEnv modifier, applied after the pools are sized, for
// cases that fill a pool from one tenant or principal: every quota equals
// its pool (engine.Limits.WholePools).
func wholePools(l *engine.Limits) { *l = l.WholePools() }

// check runs CheckInvariants when the store has an Inspector.
func (e *env) check() {
	e.t.Helper()
	if e.insp == nil {
		return
	}
	if err := e.insp.CheckInvariants(); err != nil {
		e.t.Fatalf("invariants broken: %v", err)
	}
}

// state is what a rejected call must leave unchanged: the Inspector's
// snapshot, or Stats when there is none.
func (e *env) state() string {
	if e.insp != nil {
		return e.insp.Snapshot()
	}
	st := e.s.Stats()
	return fmtStats(st)
}

// unchanged runs fn and fails if the store's state differs afterwards.
func (e *env) unchanged(what string, fn func()) {
	e.t.Helper()
	before := e.state()
	fn()
	after := e.state()
	if before != after {
		e.t.Fatalf("%s changed the store:\n--- before\n%s\n--- after\n%s", what, before, after)
	}
	e.check()
}
