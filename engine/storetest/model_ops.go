package storetest

import (
	"fmt"
	"net/netip"
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

// expect checks an outcome against the allowed ones and, when the call was
// rejected, that the store did not change.
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

// rejected runs fn and requires the state to be unchanged when reject says so.
func (m *model) guarded(op string, fn func() bool) {
	m.e.t.Helper()
	before := m.e.state()
	if rejected := fn(); rejected {
		if after := m.e.state(); after != before {
			m.e.t.Fatalf("rejected %s changed the store:\n--- before\n%s\n--- after\n%s", op, before, after)
		}
	}
}

// shed checks a CapacityExceeded against the pools the model says are full.
func (m *model) shed(op string, r engine.Result, full []engine.Pool) {
	t := m.e.t
	t.Helper()
	if !slices.Contains(full, r.Pool) || r.Quota() != r.Pool.IsQuota() {
		t.Fatalf("%s shed on pool %v; model says full: %v", op, r.Pool, full)
	}
}

func (m *model) opCreateListing(in *stream) {
	owner := opsOwners[in.n(len(opsOwners))]
	key := fmt.Sprintf("k%d", in.n(4))
	variant := in.n(3)
	sp := spec()
	switch variant {
	case 1:
		sp.DisplayName = "Other host"
	case 2:
		sp.Visibility = engine.Unlisted
		sp.Region = "us-east"
	}
	cmd := engine.CreateListing{Tenant: tenant, Owner: owner, IdempotencyKey: key, Spec: sp}
	rec := m.idem["L|"+string(owner)+"|"+key]
	request := fmt.Sprint(variant)
	nl, _, _, _ := m.counts()
	var full []engine.Pool
	if nl >= m.e.l.MaxListings {
		full = append(full, engine.PoolListings)
	}
	if len(m.idem) >= m.e.l.MaxIdempotency {
		full = append(full, engine.PoolIdempotency)
	}
	m.guarded("CreateListing", func() bool {
		v, r, err := m.e.s.CreateListing(m.e.ctx, cmd)
		switch {
		case m.draining:
			m.expect("CreateListing", r, err, engine.Draining)
		case m.revoked[owner] != 0:
			m.expect("CreateListing", r, err, engine.Revoked)
		case rec != nil && rec.request != request:
			m.expect("CreateListing", r, err, engine.Conflict)
		case rec != nil && rec.listing.alive:
			m.expect("CreateListing", r, err, engine.Success)
			if !r.Replay || v.ID != rec.listing.v.ID || v.Version != rec.listing.version {
				m.e.t.Fatalf("CreateListing replay: replay=%v same=%v", r.Replay, v.ID == rec.listing.v.ID)
			}
			return true
		case rec != nil:
			m.expect("CreateListing", r, err, engine.Expired)
		case len(full) > 0:
			m.expect("CreateListing", r, err, engine.CapacityExceeded)
			m.shed("CreateListing", r, full)
		case m.ownerListings(owner) >= m.e.l.OwnerListingQuota:
			m.expect("CreateListing", r, err, engine.CapacityExceeded)
			m.shed("CreateListing", r, []engine.Pool{engine.QuotaOwnerListings})
		default:
			m.expect("CreateListing", r, err, engine.Success)
			if r.Replay {
				m.e.t.Fatalf("fresh CreateListing reported Replay")
			}
			m.order++
			l := &mListing{v: v, alive: true, version: 1, players: sp.CurrentPlayers,
				leaseAt: m.now + m.e.l.LeaseTTL, createdInOrder: m.order}
			m.listings = append(m.listings, l)
			m.idem["L|"+string(owner)+"|"+key] = &mIdem{request: request, listing: l, at: m.now + m.e.l.IdempotencyTTL}
			return false
		}
		return true
	})
}

func (m *model) opRenew(in *stream) {
	l := m.pickListing(in)
	if l == nil {
		return
	}
	cmd := m.e.renewCmd(l.v)
	cmd.ExpectedVersion = l.version
	if in.n(4) == 0 {
		cmd.ExpectedVersion = l.version - 1 + uint64(in.n(3))*2 // stale (or, for 1, current+1)
	}
	wrongKey := in.n(8) == 0
	if wrongKey {
		cmd.LeaseKey = m.e.presenceKey(l.v.Presence)
	}
	cmd.CurrentPlayers = in.n(10) - 1 // -1..8
	m.guarded("RenewLease", func() bool {
		v, r, err := m.e.s.RenewLease(m.e.ctx, cmd)
		switch {
		case m.draining:
			m.expect("RenewLease", r, err, engine.Draining)
		case !l.alive || wrongKey:
			m.expect("RenewLease", r, err, engine.NotFound)
		case cmd.ExpectedVersion != l.version:
			m.expect("RenewLease", r, err, engine.Conflict)
			if v.Version != l.version {
				m.e.t.Fatalf("stale renew reports version %d, model %d", v.Version, l.version)
			}
		default:
			m.expect("RenewLease", r, err, engine.Success)
			l.version++
			l.leaseAt = m.now + m.e.l.LeaseTTL
			if cmd.CurrentPlayers >= 0 {
				l.players = cmd.CurrentPlayers
			}
			if v.Version != l.version || v.CurrentPlayers != l.players {
				m.e.t.Fatalf("renew view version %d players %d, model %d %d", v.Version, v.CurrentPlayers, l.version, l.players)
			}
			return false
		}
		return true
	})
}

func (m *model) opDelete(in *stream) {
	l := m.pickListing(in)
	if l == nil {
		return
	}
	cmd := m.e.deleteCmd(l.v)
	wrongOwner := in.n(8) == 0
	if wrongOwner {
		cmd.Owner = "pub-x"
	}
	m.guarded("DeleteListing", func() bool {
		r, err := m.e.s.DeleteListing(m.e.ctx, cmd)
		if !l.alive || wrongOwner {
			m.expect("DeleteListing", r, err, engine.NotFound)
			return true
		}
		m.expect("DeleteListing", r, err, engine.Success)
		m.kill(l)
		return false
	})
}

func (m *model) opPresence(in *stream) {
	l := m.pickListing(in)
	if l == nil {
		return
	}
	seq := l.seq + uint64(in.n(3)) // +0 is stale
	if seq == 0 {
		seq = 1
	}
	ep := opsEndpoint(in.n(4))
	cmd := engine.BindPresence{Handle: l.v.Presence, Key: m.e.presenceKey(l.v.Presence), Seq: seq, Public: ep.Public, Local: ep.Local}
	if in.n(10) == 0 {
		cmd.Key = m.e.leaseKey(l.v.Lease)
	}
	var op engine.Op
	op.Kind, op.Presence = engine.OpPresence, cmd
	m.guarded("BindHostPresence", func() bool {
		op.PresenceView, op.Result, op.Err = m.e.s.BindHostPresence(m.e.ctx, cmd)
		return m.checkPresence(&op, l)
	})
}

// checkPresence predicts a presence op (direct or batched), updates the
// model and reports whether it was rejected.
func (m *model) checkPresence(op *engine.Op, l *mListing) bool {
	cmd, r, err := &op.Presence, op.Result, op.Err
	_, np, _, _ := m.counts()
	stale := cmd.Seq <= l.seq
	full := !l.fresh(m.now) && np >= m.e.l.MaxPresence
	switch {
	case !l.alive || cmd.Key != m.e.presenceKey(l.v.Presence):
		m.expect("BindHostPresence", r, err, engine.NotFound)
	case stale && full:
		m.expect("BindHostPresence", r, err, engine.Conflict, engine.CapacityExceeded)
	case stale:
		m.expect("BindHostPresence", r, err, engine.Conflict)
	case full:
		m.expect("BindHostPresence", r, err, engine.CapacityExceeded)
		m.shed("BindHostPresence", r, []engine.Pool{engine.PoolPresence})
	default:
		m.expect("BindHostPresence", r, err, engine.Success)
		l.seq, l.presAt, l.public, l.local = cmd.Seq, m.now+m.e.l.PresenceTTL, cmd.Public, cmd.Local
		pv := op.PresenceView
		want := m.pending(l)
		if pv.Listing != l.v.ID || pv.TTL != m.e.l.PresenceTTL || pv.NPending != len(want) || !slices.Equal(pv.Pending[:pv.NPending], want) {
			m.e.t.Fatalf("presence view: ttl %v pending %d, model %d", pv.TTL, pv.NPending, len(want))
		}
		return false
	}
	return true
}

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
	ik := "A|" + string(client) + "|" + key
	rec := m.idem[ik]
	request := fmt.Sprint(l.v.ID, pv)
	_, _, na, _ := m.counts()
	var full []engine.Pool
	if na >= m.e.l.MaxAttempts {
		full = append(full, engine.PoolAttempts)
	}
	if len(m.idem) >= m.e.l.MaxIdempotency {
		full = append(full, engine.PoolIdempotency)
	}
	m.guarded("CreateJoinAttempt", func() bool {
		a, r, err := m.e.s.CreateJoinAttempt(m.e.ctx, cmd)
		switch {
		case m.draining:
			m.expect("CreateJoinAttempt", r, err, engine.Draining)
		case m.revoked[client] != 0:
			m.expect("CreateJoinAttempt", r, err, engine.Revoked)
		case rec != nil && rec.request != request:
			m.expect("CreateJoinAttempt", r, err, engine.Conflict)
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
		case len(full) > 0:
			m.expect("CreateJoinAttempt", r, err, engine.CapacityExceeded)
			m.shed("CreateJoinAttempt", r, full)
		case na >= m.e.l.TenantAttemptQuota:
			m.expect("CreateJoinAttempt", r, err, engine.CapacityExceeded)
			m.shed("CreateJoinAttempt", r, []engine.Pool{engine.QuotaTenantAttempts})
		default:
			m.expect("CreateJoinAttempt", r, err, engine.Success)
			if r.Replay || a.HostPresence != l.v.Presence || a.HostPresencePublic != l.public || a.Listing != l.v.ID {
				m.e.t.Fatalf("fresh attempt view wrong: replay=%v", r.Replay)
			}
			m.order++
			ma := &mAttempt{a: a, l: l, alive: true, at: m.now + m.e.l.AttemptTTL, order: m.order}
			m.attempts = append(m.attempts, ma)
			m.idem[ik] = &mIdem{request: request, attempt: ma, at: m.now + m.e.l.IdempotencyTTL}
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
	cur := &a.peer
	if cmd.Role == engine.RoleHost {
		rightKey, cur = m.e.hostKey(a.a.HostPresence, a.a.Handle), &a.host
	}
	b := engine.Binding{Public: cmd.Public, Local: cmd.Local}
	switch {
	case !a.alive || cmd.Key != rightKey:
		m.expect("BindAttemptEndpoint", r, err, engine.NotFound)
	case cur.Bound() && *cur != b:
		m.expect("BindAttemptEndpoint", r, err, engine.ReplayRejected)
	default:
		m.expect("BindAttemptEndpoint", r, err, engine.Success)
		if r.Replay != cur.Bound() {
			m.e.t.Fatalf("bind: Replay=%v, model already bound=%v", r.Replay, cur.Bound())
		}
		*cur = b
		if op.Attempt.Host != a.host || op.Attempt.Peer != a.peer || op.Attempt.Handle != a.a.Handle {
			m.e.t.Fatalf("bind view endpoints differ from the model")
		}
		if batched {
			ready := a.host.Bound() && a.peer.Bound()
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
		} else if op.Attempt.Consumed != a.consumed {
			m.e.t.Fatalf("bind view consumed=%v, model %v", op.Attempt.Consumed, a.consumed)
		}
		return r.Replay
	}
	if batched && (op.IntroReady || op.FirstIntro) {
		m.e.t.Fatalf("rejected batched bind set an introduction")
	}
	return true
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
		case !a.host.Bound() || !a.peer.Bound():
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

func (m *model) opRevokeListing(in *stream) {
	l := m.pickListing(in)
	if l == nil {
		return
	}
	m.guarded("RevokeListing", func() bool {
		r, err := m.e.s.RevokeListing(m.e.ctx, engine.RevokeListing{Tenant: tenant, Listing: l.v.ID})
		if !l.alive {
			m.expect("RevokeListing", r, err, engine.NotFound)
			return true
		}
		m.expect("RevokeListing", r, err, engine.Success)
		m.kill(l)
		return false
	})
}

// opsRevocationTTL is constant, so a re-revocation only ever extends.
const opsRevocationTTL = 90 * time.Second

func (m *model) opRevokePrincipal(in *stream) {
	subjects := append(slices.Clone(opsOwners), opsClients...)
	s := subjects[in.n(len(subjects))]
	m.guarded("RevokePrincipal", func() bool {
		n, r, err := m.e.s.RevokePrincipal(m.e.ctx, s, opsRevocationTTL)
		if m.revoked[s] == 0 && len(m.revoked) >= m.e.l.MaxRevocations {
			m.expect("RevokePrincipal", r, err, engine.CapacityExceeded)
			m.shed("RevokePrincipal", r, []engine.Pool{engine.PoolRevocations})
			return true
		}
		m.expect("RevokePrincipal", r, err, engine.Success)
		want := 0
		for _, l := range m.listings {
			if l.alive && l.v.Owner == s {
				want++
			}
		}
		for _, a := range m.attempts {
			if a.alive && a.a.Client == s {
				want++
				a.alive = false
			}
		}
		for _, l := range m.listings {
			if l.alive && l.v.Owner == s {
				m.kill(l)
			}
		}
		if n != want {
			m.e.t.Fatalf("RevokePrincipal removed %d, model %d", n, want)
		}
		m.revoked[s] = m.now + opsRevocationTTL
		return false
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
			ops = append(ops, m.bindOp(in, a))
			ls, as = append(ls, nil), append(as, a)
		}
	}
	if err := m.e.s.ApplyBatch(m.e.ctx, ops); err != nil {
		m.e.t.Fatalf("ApplyBatch: %v", err)
	}
	for i := range ops {
		if ls[i] != nil {
			m.checkPresence(&ops[i], ls[i])
		} else {
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
