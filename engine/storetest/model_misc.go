package storetest

// Replay, drain, read, batch and invalid-input operations of the randomized test.

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func (m *model) opReplay(in *stream) {
	ns := []string{"ticket", "nonce"}[in.n(2)]
	key := fmt.Sprint(in.n(4))
	life := []time.Duration{0, time.Second, 10 * time.Second}[in.n(3)]
	m.guarded("ConsumeReplay", func() bool {
		r, err := m.e.s.ConsumeReplay(m.e.ctx, engine.ConsumeReplay{Namespace: ns, Key: key, Lifetime: life})
		switch {
		case m.replay[ns+"\x00"+key] != 0:
			m.expect("ConsumeReplay", r, err, engine.ReplayRejected)
		case len(m.replay) >= m.e.l.MaxReplay:
			m.expect("ConsumeReplay", r, err, engine.CapacityExceeded)
			m.shed("ConsumeReplay", r, []engine.Pool{engine.PoolReplay})
		default:
			m.expect("ConsumeReplay", r, err, engine.Success)
			if life == 0 {
				life = m.e.l.ReplayTTL
			}
			m.replay[ns+"\x00"+key] = m.now + life
			return false
		}
		return true
	})
}

func (m *model) opDrain() {
	if err := m.e.s.BeginDrain(m.e.ctx); err != nil {
		m.e.t.Fatalf("BeginDrain: %v", err)
	}
	if !m.draining {
		m.draining, m.drainAt = true, m.now+m.e.l.DrainWindow
	}
}

// opRead browses, reads an introduction back, or checks Revoked.
func (m *model) opRead(in *stream) {
	e := m.e
	switch in.n(3) {
	case 0:
		q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 1 + in.n(5)}
		if in.n(2) == 0 {
			q.Region = "eu-central"
		}
		if l := m.pickListing(in); l != nil && in.n(2) == 0 {
			q.After, q.HasAfter = l.v.ID, true
		}
		want := m.visible(q)
		items, more, r, err := e.s.BrowseVisible(e.ctx, q, nil)
		m.expect("BrowseVisible", r, err, engine.Success)
		n := min(len(want), q.Limit)
		if len(items) != n || more != (len(want) > q.Limit) {
			e.t.Fatalf("browse: %d items more=%v; model %d of %d", len(items), more, n, len(want))
		}
		for i := range items {
			if items[i].ID != want[i].v.ID || items[i].Version != want[i].version || items[i].HostPublic != want[i].public {
				e.t.Fatalf("browse item %d differs from the model", i)
			}
		}
	case 1:
		a := m.pickAttempt(in)
		if a == nil {
			return
		}
		intro, r, err := e.s.Introduction(e.ctx, a.a.Handle)
		switch {
		case !a.alive:
			m.expect("Introduction", r, err, engine.NotFound)
		case !a.consumed:
			m.expect("Introduction", r, err, engine.Conflict)
		default:
			m.expect("Introduction", r, err, engine.Success)
			if intro.Host != a.host || intro.Client != a.peer {
				e.t.Fatalf("introduction read-back differs from the model")
			}
		}
	default:
		subjects := append(slices.Clone(opsOwners), opsClients...)
		s := subjects[in.n(len(subjects))]
		ok, err := e.s.Revoked(e.ctx, s)
		if err != nil || ok != (m.revoked[s] != 0) {
			e.t.Fatalf("Revoked(%q) = %v %v; model %v", s, ok, err, m.revoked[s] != 0)
		}
	}
}

// opBatch applies up to 8 presence and bind ops in one ApplyBatch and
// predicts each in order.
func (m *model) opBatch(in *stream) {
	k := 1 + in.n(8)
	ops := make([]engine.Op, 0, k)
	ls := make([]*mListing, 0, k)
	as := make([]*mAttempt, 0, k)
	for i := 0; i < k; i++ {
		if in.n(2) == 0 {
			l := m.pickListing(in)
			if l == nil {
				continue
			}
			seq := l.seq + uint64(1+i+in.n(2)) // mostly rising within the batch
			ep := opsEndpoint(in.n(4))
			ops = append(ops, engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{
				Handle: l.v.Presence, Key: m.e.presenceKey(l.v.Presence), Seq: seq, Public: ep.Public, Local: ep.Local}})
			ls, as = append(ls, l), append(as, nil)
		} else {
			a := m.pickAttempt(in)
			if a == nil {
				continue
			}
			if m.relay && in.n(4) == 0 {
				ops = append(ops, m.reportOp(in, a))
			} else {
				ops = append(ops, m.bindOp(in, a))
			}
			ls, as = append(ls, nil), append(as, a)
		}
	}
	if err := m.e.s.ApplyBatch(m.e.ctx, ops); err != nil {
		m.e.t.Fatalf("ApplyBatch: %v", err)
	}
	for i := range ops {
		switch {
		case ls[i] != nil:
			m.checkPresence(&ops[i], ls[i])
		case ops[i].Kind == engine.OpOutcome:
			m.checkReport(&ops[i], as[i])
		default:
			m.checkBind(&ops[i], as[i], true)
		}
	}
}

// opInvalid sends one invalid input and requires an InputError and no change.
func (m *model) opInvalid(in *stream) {
	e := m.e
	var err error
	e.unchanged("invalid input", func() {
		switch in.n(6) {
		case 0:
			c := engine.CreateListing{Tenant: tenant, Owner: "pub-0", IdempotencyKey: "k0", Spec: spec()}
			c.Spec.MaxPlayers = 2000
			_, _, err = e.s.CreateListing(e.ctx, c)
		case 1:
			_, _, _, err = e.s.BrowseVisible(e.ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 0}, nil)
		case 2:
			_, _, err = e.s.RevokePrincipal(e.ctx, "pub-0", 0)
		case 3:
			if l := m.pickListing(in); l != nil {
				c := m.e.presenceCmd(l.v, l.seq+1, netip.AddrPort{})
				_, _, err = e.s.BindHostPresence(e.ctx, c)
			} else {
				err = &engine.InputError{Field: "skip"}
			}
		case 4:
			if a := m.pickAttempt(in); a != nil {
				c := m.e.bindCmd(a.a, 0, pub(1), netip.AddrPort{})
				_, _, err = e.s.BindAttemptEndpoint(e.ctx, c)
			} else {
				err = &engine.InputError{Field: "skip"}
			}
		default:
			_, err = e.s.ConsumeReplay(e.ctx, engine.ConsumeReplay{Namespace: "", Key: "k"})
		}
	})
	var ie *engine.InputError
	if !asInput(err, &ie) {
		e.t.Fatalf("invalid input: error %v, want *engine.InputError", err)
	}
}
