package storetest

// The relay fallback in the randomized test: relay-only attempts, relayed
// candidates and the relay introduction, outcome reports, MarkOffered, and
// every attempt's status, live or from its tombstone.

import (
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// mRelay is an attempt's relay state in the model.
type mRelay struct {
	only             bool
	offered          bool
	hostRel, peerRel netip.AddrPort
	relayed          bool
	hostOut, peerOut engine.PunchOutcome

	end       engine.AttemptEnd
	tombAt    time.Duration // its tombstone's deadline
	evicted   bool          // the tombstone pool was full and this one went
	uncertain bool          // evicted or not: one of equal deadlines went, the model cannot say which
}

func (r *mRelay) progress(a *mAttempt) engine.AttemptProgress {
	return engine.AttemptProgress{
		RelayOnly: r.only, Offered: r.offered, HostBound: a.host.Bound(), ClientBound: a.peer.Bound(),
		HostRelayed: r.hostRel.IsValid(), ClientRelayed: r.peerRel.IsValid(), Introduced: a.consumed, Relayed: r.relayed,
	}
}

// opsRelayed is one of two relayed addresses, so identical relayed rebinds
// and conflicting ones both happen.
func opsRelayed(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.MustParseAddr("192.0.2.50"), uint16(5000+i%2))
}

// end records an attempt's end at the given time and its tombstone: the
// pool holds at most the attempts ceiling, and when full the earliest due
// goes first. Among equal deadlines a store may drop any one, so those
// become uncertain (either answer is accepted from then on).
func (m *model) end(a *mAttempt, cause engine.AttemptEnd, at time.Duration) {
	a.alive = false
	a.relay.end, a.relay.tombAt = cause, at+engine.TombstoneTTL
	live := m.tombs[:0]
	for _, x := range m.tombs {
		if x.relay.tombAt > m.now {
			live = append(live, x)
		}
	}
	m.tombs = live
	if len(m.tombs) >= m.e.l.MaxAttempts {
		first := 0
		for i, x := range m.tombs {
			if x.relay.tombAt < m.tombs[first].relay.tombAt {
				first = i
			}
		}
		dl := m.tombs[first].relay.tombAt
		var tied []*mAttempt
		for _, x := range m.tombs {
			if x.relay.tombAt == dl {
				tied = append(tied, x)
			}
		}
		if len(tied) > 1 || tied[0].relay.uncertain {
			for _, x := range tied {
				x.relay.uncertain = true
			}
		}
		m.tombs[first].relay.evicted = true
		m.tombs = append(m.tombs[:first], m.tombs[first+1:]...)
	}
	m.tombs = append(m.tombs, a)
}

// verifyStatus compares a's status, as its client, with the model.
func (m *model) verifyStatus(a *mAttempt) {
	if !m.relay {
		return
	}
	t := m.e.t
	t.Helper()
	st, r, err := m.e.s.AttemptStatus(m.e.ctx, engine.GetAttempt{Tenant: tenant, Subject: a.a.Client, Attempt: a.a.ID})
	if err != nil {
		t.Fatalf("AttemptStatus: %v", err)
	}
	p := a.relay.progress(a)
	var state engine.AttemptState
	var reason engine.AttemptReason
	switch {
	case a.alive:
		state, reason = p.Live()
	case a.relay.tombAt <= m.now || a.relay.evicted && !a.relay.uncertain:
		m.expect("AttemptStatus of a gone attempt", r, err, engine.NotFound)
		return
	case a.relay.uncertain && r.Outcome == engine.NotFound:
		return
	default:
		state, reason = p.Ended(a.relay.end)
	}
	m.expect("AttemptStatus", r, err, engine.Success)
	want := engine.AttemptStatus{
		Attempt: a.a.ID, Listing: a.l.v.ID, State: state, Reason: reason, RelayOnly: a.relay.only,
		HostBound: p.HostBound, ClientBound: p.ClientBound, HostRelayed: p.HostRelayed, ClientRelayed: p.ClientRelayed,
		HostOutcome: a.relay.hostOut, ClientOutcome: a.relay.peerOut,
	}
	st.ExpiresAt = time.Time{}
	if st != want {
		t.Fatalf("attempt #%d status %+v; model %+v", a.order, st, want)
	}
}

// reportOp builds an outcome report of a random role and path for a.
func (m *model) reportOp(in *stream, a *mAttempt) engine.Op {
	role := engine.RoleHost
	if in.n(2) == 0 {
		role = engine.RoleClient
	}
	rep := m.e.reportCmd(a.a, role, engine.Path(1+in.n(3)), uint32(in.n(4))*700)
	if in.n(12) == 0 {
		rep.Key = m.e.clientKey(engine.Handle{UUID: a.a.ID.UUID})
	}
	return engine.Op{Kind: engine.OpOutcome, Report: rep}
}

// checkReport predicts an outcome report, updates the model and reports
// whether it changed nothing.
func (m *model) checkReport(op *engine.Op, a *mAttempt) bool {
	rep := &op.Report
	rightKey, out := m.e.clientKey(a.a.Handle), &a.relay.peerOut
	if rep.Role == engine.RoleHost {
		rightKey, out = m.e.hostKey(a.a.HostPresence, a.a.Handle), &a.relay.hostOut
	}
	if !a.alive || rep.Key != rightKey {
		m.expect("outcome report", op.Result, op.Err, engine.NotFound)
		return true
	}
	m.expect("outcome report", op.Result, op.Err, engine.Success)
	if op.Duplicate != out.Reported() || op.Tenant != tenant || op.Attempt.ID != a.a.ID {
		m.e.t.Fatalf("outcome report: duplicate=%v tenant=%v; model reported=%v", op.Duplicate, op.Tenant, out.Reported())
	}
	if out.Reported() {
		return true
	}
	*out = engine.PunchOutcome{Path: rep.Path, ConnectMillis: rep.ConnectMillis}
	return false
}

func (m *model) opMarkOffered(in *stream) {
	a := m.pickAttempt(in)
	if a == nil {
		return
	}
	m.guarded("MarkOffered", func() bool {
		r, err := m.e.s.MarkOffered(m.e.ctx, a.a.Handle)
		if !a.alive {
			m.expect("MarkOffered", r, err, engine.NotFound)
			return true
		}
		m.expect("MarkOffered", r, err, engine.Success)
		if r.Replay != a.relay.offered {
			m.e.t.Fatalf("MarkOffered replay=%v; model offered=%v", r.Replay, a.relay.offered)
		}
		a.relay.offered = true
		return r.Replay
	})
}
