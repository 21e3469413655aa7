package storetest

// Listing-side operations of the randomized test: each predicts the
// outcome from the model, applies the call, compares and updates the model.

import (
	"fmt"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func (m *model) opCreateListing(in *stream) {
	owner := opsOwners[in.n(len(opsOwners))]
	key := fmt.Sprintf("k%d", in.n(4))
	variant := in.n(3)
	sp := spec()
	switch variant {
	case 1:
		sp.DisplayName = "Other host"
		if m.query {
			sp.Attributes = modelAttrs[1]
		}
	case 2:
		sp.Visibility = engine.Unlisted
		sp.Region = "us-east"
	}
	cmd := engine.CreateListing{Tenant: tenant, Owner: owner, IdempotencyKey: key, Spec: sp}
	rec := m.idem["L|"+string(owner)+"|"+key]
	request := fmt.Sprint(variant)
	nl, _, _, _ := m.counts()
	full := m.fullPools(engine.PoolListings, nl, m.e.l.MaxListings)
	m.guarded("CreateListing", func() bool {
		v, r, err := m.e.s.CreateListing(m.e.ctx, cmd)
		switch {
		case m.createRefused("CreateListing", owner, rec, request, r, err):
		case rec != nil && rec.listing.alive:
			m.expect("CreateListing", r, err, engine.Success)
			if !r.Replay || v.ID != rec.listing.v.ID || v.Version != rec.listing.version {
				m.e.t.Fatalf("CreateListing replay: replay=%v same=%v", r.Replay, v.ID == rec.listing.v.ID)
			}
			return true
		case rec != nil:
			m.expect("CreateListing", r, err, engine.Expired)
		case m.createShed("CreateListing", r, err, full, m.listingQuota(owner)):
		default:
			m.expect("CreateListing", r, err, engine.Success)
			if r.Replay {
				m.e.t.Fatalf("fresh CreateListing reported Replay")
			}
			m.order++
			l := &mListing{v: v, alive: true, version: 1, players: sp.CurrentPlayers, attrs: sp.Attributes,
				leaseAt: m.now + m.e.l.LeaseTTL, createdInOrder: m.order}
			m.listings = append(m.listings, l)
			m.idem["L|"+string(owner)+"|"+key] = &mIdem{request: request, listing: l, at: m.now + m.e.l.IdempotencyTTL, by: owner}
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
	if !m.query {                     // a store without the Full refusal: never full
		cmd.CurrentPlayers = min(cmd.CurrentPlayers, l.v.Spec.MaxPlayers-1)
	}
	if in.n(4) == 0 && m.query {
		cmd.SetAttributes, cmd.Attributes = true, modelAttrs[in.n(len(modelAttrs))]
	}
	m.guarded("RenewLease", func() bool {
		v, r, err := m.e.s.RenewLease(m.e.ctx, cmd)
		switch {
		case m.draining:
			m.expect("RenewLease", r, err, engine.Draining)
		case m.revoked[cmd.Owner] != 0:
			m.expect("RenewLease", r, err, engine.Revoked)
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
			for _, rec := range m.idem {
				if rec.listing == l { // a renewal extends the creation's record
					rec.at = m.now + m.e.l.IdempotencyTTL
				}
			}
			if cmd.CurrentPlayers >= 0 {
				l.players = cmd.CurrentPlayers
			}
			if cmd.SetAttributes {
				l.attrs = cmd.Attributes
			}
			if v.Version != l.version || v.CurrentPlayers != l.players || !v.Attributes.Equal(l.attrs) {
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
		m.kill(l, engine.EndListingRemoved, m.now)
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
		m.kill(l, engine.EndRevoked, m.now)
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
			}
		}
		for _, l := range m.listings {
			if l.alive && l.v.Owner == s {
				m.kill(l, engine.EndRevoked, m.now)
			}
		}
		for _, a := range m.attempts {
			if a.alive && a.a.Client == s {
				m.end(a, engine.EndRevoked, m.now)
			}
		}
		if n != want {
			m.e.t.Fatalf("RevokePrincipal removed %d, model %d", n, want)
		}
		m.revoked[s] = m.now + opsRevocationTTL
		return false
	})
}

// modelAttrs are the attributes the randomized test sets: none, and a few
// sets that differ in values, types and count.
var modelAttrs = []engine.Attributes{
	nil,
	{{Name: "mode", Str: "coop"}},
	{{Name: "level", Num: 3, IsNum: true}, {Name: "mode", Str: "pvp"}},
	{{Name: "level", Num: -4, IsNum: true}},
}
