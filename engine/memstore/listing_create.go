package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// CreateListing registers a listing. Order of checks (reference): input ->
// ServiceUnavailable -> Draining -> Revoked(owner) -> idempotency (Conflict /
// replay / Expired) -> global pools (listings, idempotency) -> quotas (owner
// listings, owner idempotency records, tenant listings, tenant idempotency
// records).
func (s *Store) CreateListing(ctx context.Context, cmd engine.CreateListing) (engine.ListingView, engine.Result, error) {
	if err := engine.ValidateCreateListing(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	fp := cmd.Spec.Hash()
	// Hash the caller-chosen keys once, outside the lock.
	owner, tenant := s.subjectKey(cmd.Owner), s.tenantKey(cmd.Tenant)
	rev := s.tenantRevKey(cmd.Tenant, cmd.Owner)
	ik := s.idemKey(idemListing, cmd.Tenant, cmd.Owner, cmd.IdempotencyKey)
	draft := s.draftListing(&cmd)
	now, err := s.begin(ctx)
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	defer s.end()
	if r, stop := s.admitNewWork(owner, &rev); stop {
		return engine.ListingView{}, r, nil
	}
	if ii := s.findIdem(&ik); ii >= 0 {
		rec := s.idem.at(ii)
		if rec.fp != fp {
			return engine.ListingView{}, engine.Result{Outcome: engine.Conflict}, nil
		}
		if li, ok := s.listingByID.get(rec.res); ok {
			return s.listingView(li, now), engine.Result{Replay: true}, nil
		}
		return engine.ListingView{}, engine.Result{Outcome: engine.Expired}, nil
	}
	if s.listings.n >= s.lim.MaxListings {
		return engine.ListingView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolListings}, nil
	}
	if s.idem.n >= s.lim.MaxIdempotency {
		return engine.ListingView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolIdempotency}, nil
	}
	if q := s.listingQuota(owner, tenant); q != engine.PoolNone {
		return engine.ListingView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: q}, nil
	}
	li := s.insertListing(draft, tenant, owner, now)
	l := s.listings.at(li)
	s.listingIdem[li] = s.addIdem(&ik, l.tenant, l.owner, fp, l.id.UUID, now+s.lim.IdempotencyTTL)
	return s.listingView(li, now), engine.Result{}, nil
}

// admitNewWork is the reference's admission check for new work; subject is
// also refused by a revocation confined to the tenant it acts in (rev). A
// lease renewal passes it too.
func (s *Store) admitNewWork(subject subjectKey, rev *tenantRevKey) (engine.Result, bool) {
	switch {
	case !s.available.Load():
		return engine.Result{Outcome: engine.ServiceUnavailable}, true
	case s.draining.Load():
		return engine.Result{Outcome: engine.Draining}, true
	case s.revoked(subject) || s.tenantRevoked(rev):
		return engine.Result{Outcome: engine.Revoked}, true
	}
	return engine.Result{}, false
}

// listingDraft is what a new listing needs that can be made before the
// commit lock is taken (keeping HMACs and copies out of the critical
// section): fresh IDs, their fingerprints, and copies of the caller's spec
// and document.
type listingDraft struct {
	id                    engine.ListingID
	lease                 engine.LeaseID
	presence              engine.Handle
	leaseKey, presenceKey engine.Fingerprint
	doc                   listingDoc
}

func (s *Store) draftListing(cmd *engine.CreateListing) *listingDraft {
	d := &listingDraft{doc: packListingDoc(&cmd.Spec, cmd.Doc)}
	s.newListingIDs(d)
	return d
}

func (s *Store) newListingIDs(d *listingDraft) {
	d.id, d.lease, d.presence = engine.ListingID{UUID: engine.NewUUID()}, engine.LeaseID{UUID: engine.NewUUID()}, engine.Handle{UUID: engine.NewUUID()}
	leaseCap, presCap := s.keys.Lease(d.lease), s.keys.Presence(d.presence)
	d.leaseKey, d.presenceKey = engine.FingerprintOf(&leaseCap), engine.FingerprintOf(&presCap)
}

// insertListing creates the listing record from d and links it into every
// index. The caller holds the commit lock and has checked every pool and
// quota.
func (s *Store) insertListing(d *listingDraft, tk tenantKey, ok subjectKey, now time.Duration) int32 {
	for s.uuidTaken(d.id.UUID) || s.uuidTaken(d.lease.UUID) || s.uuidTaken(d.presence.UUID) || d.id.UUID == d.lease.UUID ||
		d.id.UUID == d.presence.UUID || d.lease.UUID == d.presence.UUID {
		s.newListingIDs(d) // astronomically unlikely
	}
	spec := d.doc.spec
	tenant := s.tenantSlot(tk)
	s.tenants.at(tenant).counts.listings++
	owner := s.subjectSlot(ok)
	li := s.listings.alloc()
	l := s.listings.at(li)
	*l = listingRec{
		id: d.id, lease: d.lease, presence: d.presence,
		leaseKey: d.leaseKey, presenceKey: d.presenceKey,
		tenant: tenant, owner: owner, browseAll: -1, browseRegion: -1,
		players: int32(spec.CurrentPlayers), version: 1,
		proto: spec.ProtocolVersion, public: spec.Visibility == engine.Public, maxPlayers: int32(spec.MaxPlayers),
	}
	for int(li) >= len(s.docs) {
		s.docs = append(s.docs, listingDoc{})
		s.bents = append(s.bents, BrowseEntry{})
		s.listingIdem = append(s.listingIdem, -1)
	}
	s.docs[li] = d.doc
	s.bents[li] = BrowseEntry{
		ID: d.id.UUID, Attrs: spec.Attributes, Created: int64(now),
		Players: l.players, MaxPlayers: l.maxPlayers,
	}
	if l.public {
		l.browseAll = s.browseRef(tenant, spec.ProtocolVersion, "")
		l.browseRegion = s.browseRef(tenant, spec.ProtocolVersion, spec.Region)
	}
	s.byOwner.pushBack(&s.subjects.at(owner).listings, li)
	s.leaseExp.push(li, now+s.lim.LeaseTTL)
	s.listingByID.put(d.id.UUID, li)
	s.listingByLease.put(d.lease.UUID, li)
	s.listingByPresence.put(d.presence.UUID, li)
	return li
}

// uuidTaken reports whether u names any listing, lease, handle or attempt.
// Store-made UUIDs are random, so this is a formality, but cheap.
func (s *Store) uuidTaken(u engine.UUID) bool {
	_, a := s.listingByID.get(u)
	_, b := s.listingByLease.get(u)
	_, c := s.listingByPresence.get(u)
	_, d := s.attemptByID.get(u)
	_, e := s.attemptByHandle.get(u)
	_, f := s.tombByID.get(u)
	return a || b || c || d || e || f
}
