package storetest

import (
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

var (
	opsOwners  = []engine.Subject{"pub-0", "pub-1", "pub-2"}
	opsClients = []engine.Subject{"cli-0", "cli-1", "pub-0"} // pub-0 also joins
	opsAdvance = []time.Duration{time.Nanosecond, time.Second, 3 * time.Second, 5 * time.Second,
		10 * time.Second, 19 * time.Second, 20 * time.Second, 30 * time.Second, 61 * time.Second}
)

// opsEndpoint is one of a few endpoints, so identical rebinds happen.
func opsEndpoint(i int) engine.Binding {
	switch i % 4 {
	case 0:
		return engine.Binding{Public: pub(1000)}
	case 1:
		return engine.Binding{Public: pub(1001), Local: lan(1001)}
	case 2:
		return engine.Binding{Public: otherPub(2000)}
	}
	return engine.Binding{Public: mustAP("[2001:db8::7]:3000")}
}

// step decodes one operation, predicts its outcome from the model, applies
// it to the store and compares.
func (m *model) step(in *stream) {
	m.expire()
	switch op := in.n(20); {
	case op <= 2:
		m.opCreateListing(in)
	case op == 3:
		m.opRenew(in)
	case op == 4:
		m.opDelete(in)
	case op <= 7:
		m.opPresence(in)
	case op <= 9:
		m.opCreateAttempt(in)
	case op <= 11:
		m.opBind(in)
	case op == 12:
		m.opConsume(in)
	case op == 13:
		m.opReplay(in)
	case op == 14:
		m.opRevokeListing(in)
	case op == 15:
		m.opRevokePrincipal(in)
	case op == 16:
		m.e.c.Advance(opsAdvance[in.n(len(opsAdvance))])
	case op == 17:
		m.opRead(in)
	case op == 18:
		m.opBatch(in)
	default:
		switch in.n(16) {
		case 0:
			m.opDrain()
		case 2, 3:
			if m.relay {
				m.opMarkOffered(in)
			}
		case 1:
			if in.n(16) == 0 { // rare: it ends the sequence
				m.e.s.MarkUnavailable()
				m.unavailable = true
				if m.e.s.Available() {
					m.e.t.Fatalf("Available after MarkUnavailable")
				}
			}
		default:
			m.opInvalid(in)
		}
	}
}

// pickListing returns a known listing (alive or not) or nil.
func (m *model) pickListing(in *stream) *mListing {
	if len(m.listings) == 0 {
		return nil
	}
	return m.listings[len(m.listings)-1-in.n(min(len(m.listings), 8))]
}

func (m *model) pickAttempt(in *stream) *mAttempt {
	if len(m.attempts) == 0 {
		return nil
	}
	return m.attempts[len(m.attempts)-1-in.n(min(len(m.attempts), 8))]
}

// expect requires no error and an outcome among the allowed ones.
func (m *model) expect(op string, r engine.Result, err error, allowed ...engine.Outcome) {
	t := m.e.t
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error %v", op, err)
	}
	if !slices.Contains(allowed, r.Outcome) {
		t.Fatalf("%s = %v (pool %v); model expects one of %v", op, r.Outcome, r.Pool, allowed)
	}
}

// guarded runs fn and, when fn reports a rejection, requires the store's
// state to be unchanged.
func (m *model) guarded(op string, fn func() bool) {
	m.e.t.Helper()
	before := m.e.state()
	if rejected := fn(); rejected {
		if after := m.e.state(); after != before {
			m.e.t.Fatalf("rejected %s changed the store:\n--- before\n%s\n--- after\n%s", op, before, after)
		}
	}
}

// fullPools lists the pools a create would shed on: its own pool when the
// model holds n of its limit records, and the idempotency pool when full.
func (m *model) fullPools(own engine.Pool, n, limit int) []engine.Pool {
	var full []engine.Pool
	if n >= limit {
		full = append(full, own)
	}
	if len(m.idem) >= m.e.l.MaxIdempotency {
		full = append(full, engine.PoolIdempotency)
	}
	return full
}

// createRefused checks the refusals every create decides first, in this
// order: draining, a revoked caller, an idempotency key reused for another
// request. It reports whether one of them applied (and was checked).
func (m *model) createRefused(op string, caller engine.Subject, rec *mIdem, request string, r engine.Result, err error) bool {
	m.e.t.Helper()
	switch {
	case m.draining:
		m.expect(op, r, err, engine.Draining)
	case m.revoked[caller] != 0:
		m.expect(op, r, err, engine.Revoked)
	case rec != nil && rec.request != request:
		m.expect(op, r, err, engine.Conflict)
	default:
		return false
	}
	return true
}

// createShed checks a create the model says is shed: on a full pool first,
// else on the caller's quota (PoolNone: within it). It reports whether
// either applied (and was checked).
func (m *model) createShed(op string, r engine.Result, err error, full []engine.Pool, quota engine.Pool) bool {
	m.e.t.Helper()
	switch {
	case len(full) > 0:
		m.expect(op, r, err, engine.CapacityExceeded)
		m.shed(op, r, full)
	case quota != engine.PoolNone:
		m.expect(op, r, err, engine.CapacityExceeded)
		m.shed(op, r, []engine.Pool{quota})
	default:
		return false
	}
	return true
}

// shed checks a CapacityExceeded against the pools the model says are full.
func (m *model) shed(op string, r engine.Result, full []engine.Pool) {
	t := m.e.t
	t.Helper()
	if !slices.Contains(full, r.Pool) || r.Quota() != r.Pool.IsQuota() {
		t.Fatalf("%s shed on pool %v; model says full: %v", op, r.Pool, full)
	}
}
