package refstore

import (
	"context"
	"encoding/hex"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// idemKey is the reference's string key, tenant-scoped as
// docs/contracts/semantics.md#idempotent-creation asks.
func idemKey(kind string, t engine.Tenant, subject engine.Subject, key string) string {
	return kind + ":" + t.Game + "/" + t.Env + ":" + string(subject) + ":" + key
}

// CreateListing counts the owner's listings by scanning every listing.
func (s *Store) CreateListing(ctx context.Context, cmd engine.CreateListing) (engine.ListingView, engine.Result, error) {
	if err := validateCreate(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	if cmd.Spec.RelayOnlyJoins {
		return engine.ListingView{}, engine.Result{}, errNoRelay
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if r, stop := s.admission(cmd.Tenant, cmd.Owner); stop {
		return engine.ListingView{}, r, nil
	}
	request := cmd.Spec.Hash()
	key := idemKey("listing", cmd.Tenant, cmd.Owner, cmd.IdempotencyKey)
	if prev, ok := s.idempotency[key]; ok {
		if prev.request != request {
			return engine.ListingView{}, engine.Result{Outcome: engine.Conflict}, nil
		}
		if l, ok := s.listings[prev.listing]; ok {
			return s.snapshot(l), engine.Result{Replay: true}, nil
		}
		return engine.ListingView{}, engine.Result{Outcome: engine.Expired}, nil
	}
	owned, inTenant := 0, 0
	for _, l := range s.listings {
		if l.owner == cmd.Owner {
			owned++
		}
		if l.tenant == cmd.Tenant {
			inTenant++
		}
	}
	if r := s.admit(creation{tenant: cmd.Tenant, subject: cmd.Owner,
		pool: engine.PoolListings, subjectQuota: engine.QuotaOwnerListings, tenantQuota: engine.QuotaTenantListings,
		used: len(s.listings), max: s.lim.MaxListings, mine: owned, mineMax: s.lim.OwnerListingQuota,
		inTenant: inTenant, tenantMax: s.lim.TenantListingQuota}); !r.OK() {
		return engine.ListingView{}, r, nil
	}
	sp := cmd.Spec
	sp.Metadata = slices.Clone(sp.Metadata) // freeze
	l := &listingEntry{
		id: engine.ListingID{UUID: engine.NewUUID()}, lease: engine.LeaseID{UUID: engine.NewUUID()},
		presence: engine.Handle{UUID: engine.NewUUID()}, tenant: cmd.Tenant, owner: cmd.Owner,
		spec: &sp, doc: slices.Clone(cmd.Doc), version: 1, players: sp.CurrentPlayers,
		leaseDeadline: now + s.lim.LeaseTTL, wallExpiresAt: s.wallDeadline(now, s.lim.LeaseTTL),
	}
	lc, pc := s.keys.Lease(l.lease), s.keys.Presence(l.presence)
	l.leaseKey, l.presenceKey = engine.FingerprintOf(&lc), engine.FingerprintOf(&pc)
	s.listings[l.id] = l
	s.leases[l.lease] = l.id
	s.presenceHandles[l.presence] = l.id
	s.idempotency[key] = &idemEntry{tenant: cmd.Tenant, subject: cmd.Owner, request: request, listing: l.id, deadline: now + s.lim.IdempotencyTTL}
	return s.snapshot(l), engine.Result{}, nil
}

// owned finds the owner's listing in its tenant.
func (s *Store) owned(t engine.Tenant, owner engine.Subject, id engine.ListingID) *listingEntry {
	l, ok := s.listings[id]
	if !ok || l.tenant != t || l.owner != owner {
		return nil
	}
	return l
}

func (s *Store) RenewLease(ctx context.Context, cmd engine.RenewLease) (engine.ListingView, engine.Result, error) {
	if err := cmd.Tenant.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	if cmd.CurrentPlayers > engine.MaxPlayers {
		return engine.ListingView{}, engine.Result{}, inputErr("current_players", "must be 0..max_players")
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	l := s.owned(cmd.Tenant, cmd.Owner, cmd.Listing)
	if l != nil && cmd.CurrentPlayers > l.spec.MaxPlayers {
		return engine.ListingView{}, engine.Result{}, inputErr("current_players", "must be 0..max_players")
	}
	// The reference renews without a revocation check (a revocation
	// removes the owner's listings, so it answered NotFound); the contract
	// makes it Revoked, checked as for new work.
	if r, stop := s.admission(cmd.Tenant, cmd.Owner); stop {
		return engine.ListingView{}, r, nil
	}
	switch {
	case l == nil || l.lease != cmd.Lease || l.leaseKey != cmd.LeaseKey:
		return engine.ListingView{}, engine.Result{Outcome: engine.NotFound}, nil
	case l.version != cmd.ExpectedVersion:
		return s.snapshot(l), engine.Result{Outcome: engine.Conflict}, nil
	}
	l.leaseDeadline = now + s.lim.LeaseTTL
	l.wallExpiresAt = s.wallDeadline(now, s.lim.LeaseTTL)
	l.version++
	// The creation's idempotency record lives as long as the listing, by
	// the same margin: a replay can never make a live duplicate.
	for _, e := range s.idempotency {
		if e.listing == l.id {
			e.deadline = now + s.lim.IdempotencyTTL
		}
	}
	if cmd.CurrentPlayers >= 0 {
		l.players = cmd.CurrentPlayers
	}
	return s.snapshot(l), engine.Result{}, nil
}

func (s *Store) DeleteListing(ctx context.Context, cmd engine.DeleteListing) (engine.Result, error) {
	if err := cmd.Tenant.Validate(); err != nil {
		return engine.Result{}, err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return engine.Result{}, err
	}
	return s.transition(ctx, func(time.Duration) engine.Result {
		l := s.owned(cmd.Tenant, cmd.Owner, cmd.Listing)
		if l == nil || l.lease != cmd.Lease || l.leaseKey != cmd.LeaseKey {
			return engine.Result{Outcome: engine.NotFound}
		}
		s.removeListing(l.id)
		return engine.Result{}
	})
}

func (s *Store) GetListing(ctx context.Context, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	if err := q.Tenant.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	if _, err := s.atomic(ctx); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return engine.ListingView{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	l, ok := s.listings[q.Listing]
	if !ok || l.tenant != q.Tenant {
		return engine.ListingView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	if _, fresh := s.presence[l.presence]; q.Joinable && !fresh {
		return engine.ListingView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	return s.snapshot(l), engine.Result{}, nil
}

// BrowseVisible is the reference's Where(...).OrderBy(id).Take(n): every
// listing filtered, the matches sorted, the page cut.
func (s *Store) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	if err := validateBrowse(&q); err != nil {
		return dst, false, engine.Result{}, err
	}
	if _, err := s.atomic(ctx); err != nil {
		return dst, false, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return dst, false, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	var visible []*listingEntry
	for _, l := range s.listings {
		if _, fresh := s.presence[l.presence]; fresh && l.tenant == q.Tenant &&
			l.spec.ProtocolVersion == q.ProtocolVersion && l.spec.Visibility == engine.Public &&
			(q.Region == "" || l.spec.Region == q.Region) &&
			(!q.HasAfter || l.id.Compare(q.After.UUID) > 0) {
			visible = append(visible, l)
		}
	}
	slices.SortFunc(visible, func(a, b *listingEntry) int { return a.id.Compare(b.id.UUID) })
	more := len(visible) > q.Limit
	if more {
		visible = visible[:q.Limit]
	}
	for _, l := range visible {
		dst = append(dst, s.snapshot(l))
	}
	return dst, more, engine.Result{}, nil
}

func (s *Store) snapshot(l *listingEntry) engine.ListingView {
	v := engine.ListingView{
		ID: l.id, Lease: l.lease, Presence: l.presence, Tenant: l.tenant, Owner: l.owner,
		Spec: l.spec, Doc: l.doc, CurrentPlayers: l.players, Version: l.version,
		LeaseExpiresAt: l.wallExpiresAt, LeaseTTL: s.lim.LeaseTTL,
	}
	if p, ok := s.presence[l.presence]; ok {
		v.PresenceFresh, v.HostPublic, v.HostLocal = true, p.public, p.local
	}
	return v
}

// requestHex renders an idempotency request hash for Snapshot.
func requestHex(h [32]byte) string { return hex.EncodeToString(h[:8]) }
