package storetest

// Attempt-side operations of the randomized test.

import (
	"fmt"

	"github.com/rendezvous/rendezvous/engine"
)

func (m *model) opCreateAttempt(in *stream) {
	client := opsClients[in.n(len(opsClients))]
	key := fmt.Sprintf("j%d", in.n(4))
	l := m.pickListing(in)
	if l == nil {
		return
	}
	pv := uint32(7)
	if in.n(8) == 0 {
		pv = 8
	}
	cmd := engine.CreateAttempt{Tenant: tenant, Client: client, IdempotencyKey: key, Listing: l.v.ID, ProtocolVersion: pv}
	cmd.RelayOnly = m.relay && in.n(3) == 0
	ik := "A|" + string(client) + "|" + key
	rec := m.idem[ik]
	request := fmt.Sprint(l.v.ID, pv, cmd.RelayOnly)
	_, _, na, _ := m.counts()
	full := m.fullPools(engine.PoolAttempts, na, m.e.l.MaxAttempts)
	m.guarded("CreateJoinAttempt", func() bool {
		a, r, err := m.e.s.CreateJoinAttempt(m.e.ctx, cmd)
		switch {
		case m.createRefused("CreateJoinAttempt", client, rec, request, r, err):
		case rec != nil && rec.attempt.alive:
			m.expect("CreateJoinAttempt", r, err, engine.Success)
			if !r.Replay || a.ID != rec.attempt.a.ID || a.Handle != rec.attempt.a.Handle {
				m.e.t.Fatalf("attempt replay: replay=%v", r.Replay)
			}
			return true
		case rec != nil:
			m.expect("CreateJoinAttempt", r, err, engine.Expired)
		case !l.fresh(m.now) || pv != l.v.Spec.ProtocolVersion:
			m.expect("CreateJoinAttempt", r, err, engine.NotFound)
		case l.players >= l.v.Spec.MaxPlayers:
			m.expect("CreateJoinAttempt", r, err, engine.Full)
		case m.createShed("CreateJoinAttempt", r, err, full, m.attemptQuota(client)):
		default:
			m.expect("CreateJoinAttempt", r, err, engine.Success)
			if r.Replay || a.HostPresence != l.v.Presence || a.HostPresencePublic != l.public || a.Listing != l.v.ID || a.RelayOnly != cmd.RelayOnly {
				m.e.t.Fatalf("fresh attempt view wrong: replay=%v relay-only=%v", r.Replay, a.RelayOnly)
			}
			m.order++
			ma := &mAttempt{a: a, l: l, alive: true, at: m.now + m.e.l.AttemptTTL, order: m.order, relay: mRelay{only: cmd.RelayOnly}}
			m.attempts = append(m.attempts, ma)
			m.idem[ik] = &mIdem{request: request, attempt: ma, at: m.now + m.e.l.IdempotencyTTL, by: client}
			return false
		}
		return true
	})
}

// bindOp builds a bind of a random role and endpoint for a.
func (m *model) bindOp(in *stream, a *mAttempt) engine.Op {
	role := engine.RoleHost
	if in.n(2) == 0 {
		role = engine.RoleClient
	}
	ep := opsEndpoint(in.n(4))
	cmd := m.e.bindCmd(a.a, role, ep.Public, ep.Local)
	if in.n(12) == 0 {
		cmd.Key = m.e.clientKey(engine.Handle{UUID: a.a.ID.UUID})
	}
	if m.relay && in.n(3) == 0 {
		cmd.Relayed = opsRelayed(in.n(2))
	}
	return engine.Op{Kind: engine.OpBindAttempt, Bind: cmd}
}

func (m *model) opBind(in *stream) {
	a := m.pickAttempt(in)
	if a == nil {
		return
	}
	op := m.bindOp(in, a)
	m.guarded("BindAttemptEndpoint", func() bool {
		op.Attempt, op.Result, op.Err = m.e.s.BindAttemptEndpoint(m.e.ctx, op.Bind)
		return m.checkBind(&op, a, false)
	})
}

// checkBind predicts a bind (direct, or batched with the introduction step),
// updates the model and reports whether it was rejected.
func (m *model) checkBind(op *engine.Op, a *mAttempt, batched bool) bool {
	cmd, r, err := &op.Bind, op.Result, op.Err
	rightKey := m.e.clientKey(a.a.Handle)
	cur, rel := &a.peer, &a.relay.peerRel
	if cmd.Role == engine.RoleHost {
		rightKey, cur, rel = m.e.hostKey(a.a.HostPresence, a.a.Handle), &a.host, &a.relay.hostRel
	}
	b := engine.Binding{Public: cmd.Public, Local: cmd.Local}
	switch {
	case !a.alive || cmd.Key != rightKey:
		m.expect("BindAttemptEndpoint", r, err, engine.NotFound)
	case cur.Bound() && *cur != b:
		m.expect("BindAttemptEndpoint", r, err, engine.ReplayRejected)
	case cmd.Relayed.IsValid() && rel.IsValid() && *rel != cmd.Relayed:
		m.expect("BindAttemptEndpoint", r, err, engine.ReplayRejected)
	default:
		m.expect("BindAttemptEndpoint", r, err, engine.Success)
		replay := cur.Bound() && (!cmd.Relayed.IsValid() || *rel == cmd.Relayed)
		if r.Replay != replay {
			m.e.t.Fatalf("bind: Replay=%v, model %v", r.Replay, replay)
		}
		*cur = b
		if cmd.Relayed.IsValid() {
			*rel = cmd.Relayed
		}
		if op.Attempt.Host != a.host || op.Attempt.Peer != a.peer || op.Attempt.Handle != a.a.Handle ||
			op.Attempt.HostRelayed != a.relay.hostRel || op.Attempt.PeerRelayed != a.relay.peerRel || op.Attempt.RelayOnly != a.relay.only {
			m.e.t.Fatalf("bind view endpoints differ from the model")
		}
		if batched {
			m.checkIntroductions(op, a)
		} else if op.Attempt.Consumed != a.consumed || op.Attempt.RelayConsumed != a.relay.relayed {
			m.e.t.Fatalf("bind view consumed=%v relayed=%v, model %v %v", op.Attempt.Consumed, op.Attempt.RelayConsumed, a.consumed, a.relay.relayed)
		}
		return r.Replay
	}
	if batched && (op.IntroReady || op.FirstIntro || op.RelayReady || op.FirstRelay) {
		m.e.t.Fatalf("rejected batched bind set an introduction")
	}
	return true
}

// checkIntroductions predicts a successful batched bind's introductions:
// the direct one once both endpoints are bound (never for a relay-only
// attempt), the relay one once both relayed addresses are known.
func (m *model) checkIntroductions(op *engine.Op, a *mAttempt) {
	ready := a.host.Bound() && a.peer.Bound() && !a.relay.only
	first := ready && !a.consumed
	if op.IntroReady != ready || op.FirstIntro != first {
		m.e.t.Fatalf("batched bind: ready=%v first=%v, model %v %v", op.IntroReady, op.FirstIntro, ready, first)
	}
	if ready {
		a.consumed = true
		want := engine.Introduction{Attempt: a.a.ID, Handle: a.a.Handle, Host: a.host, Client: a.peer}
		if op.Intro != want {
			m.e.t.Fatalf("batched introduction differs from the model")
		}
	}
	rready := a.relay.hostRel.IsValid() && a.relay.peerRel.IsValid()
	rfirst := rready && !a.relay.relayed
	if op.RelayReady != rready || op.FirstRelay != rfirst {
		m.e.t.Fatalf("batched bind: relay ready=%v first=%v, model %v %v", op.RelayReady, op.FirstRelay, rready, rfirst)
	}
	if rready {
		a.relay.relayed = true
		want := engine.RelayIntroduction{Attempt: a.a.ID, Handle: a.a.Handle, Host: a.relay.hostRel, Client: a.relay.peerRel}
		if op.RelayIntro != want {
			m.e.t.Fatalf("relay introduction differs from the model")
		}
	}
}

func (m *model) opConsume(in *stream) {
	a := m.pickAttempt(in)
	if a == nil {
		return
	}
	m.guarded("ConsumeIntroduction", func() bool {
		intro, r, err := m.e.s.ConsumeIntroduction(m.e.ctx, a.a.Handle)
		switch {
		case !a.alive:
			m.expect("ConsumeIntroduction", r, err, engine.NotFound)
		case a.consumed:
			m.expect("ConsumeIntroduction", r, err, engine.ReplayRejected)
		case !a.host.Bound() || !a.peer.Bound() || a.relay.only:
			m.expect("ConsumeIntroduction", r, err, engine.Conflict)
		default:
			m.expect("ConsumeIntroduction", r, err, engine.Success)
			a.consumed = true
			if intro.Host != a.host || intro.Client != a.peer || intro.Attempt != a.a.ID {
				m.e.t.Fatalf("introduction differs from the model")
			}
			return false
		}
		return true
	})
}
