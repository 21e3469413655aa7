package engine

import (
	"context"
	"time"
)

// CreateListing registers a listing. Order of checks (reference): input ->
// ServiceUnavailable -> Draining -> Revoked(owner) -> idempotency (Conflict /
// replay / Expired) -> global pools (listings, idempotency) -> quotas (owner
// listings, tenant listings, tenant idempotency records).
func (s *MemStore) CreateListing(ctx context.Context, cmd CreateListing) (ListingView, Result, error) {
	if err := validateCreateListing(&cmd); err != nil {
		return ListingView{}, Result{}, err
	}
	fp := cmd.Spec.Hash()
	// Hash the caller-chosen keys once, outside the lock.
	owner, tenant := s.subjectKey(cmd.Owner), s.tenantKey(cmd.Tenant)
	rev := s.tenantRevKey(cmd.Tenant, cmd.Owner)
	ik := s.idemKey(idemListing, cmd.Tenant, cmd.Owner, cmd.IdempotencyKey)
	draft := s.draftListing(&cmd)
	now, err := s.begin(ctx)
	if err != nil {
		return ListingView{}, Result{}, err
	}
	defer s.end()
	if r, stop := s.admitNewWork(owner, &rev); stop {
		return ListingView{}, r, nil
	}
	if ii := s.findIdem(&ik); ii >= 0 {
		rec := s.idem.at(ii)
		if rec.fp != fp {
			return ListingView{}, Result{Outcome: Conflict}, nil
		}
		if li, ok := s.listingByID.get(rec.res); ok {
			return s.listingView(li, now), Result{Replay: true}, nil
		}
		return ListingView{}, Result{Outcome: Expired}, nil
	}
	if s.listings.n >= s.lim.MaxListings {
		return ListingView{}, Result{Outcome: CapacityExceeded, Pool: PoolListings}, nil
	}
	if s.idem.n >= s.lim.MaxIdempotency {
		return ListingView{}, Result{Outcome: CapacityExceeded, Pool: PoolIdempotency}, nil
	}
	if q := s.listingQuota(owner, tenant); q != PoolNone {
		return ListingView{}, Result{Outcome: CapacityExceeded, Pool: q}, nil
	}
	li := s.insertListing(draft, tenant, owner, now)
	l := s.listings.at(li)
	s.listingIdem[li] = s.addIdem(&ik, l.tenant, fp, l.id.UUID, now+s.lim.IdempotencyTTL)
	return s.listingView(li, now), Result{}, nil
}

func validateCreateListing(cmd *CreateListing) error {
	if err := cmd.Tenant.Validate(); err != nil {
		return err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return err
	}
	if err := ValidateIdempotencyKey(cmd.IdempotencyKey); err != nil {
		return err
	}
	if len(cmd.Doc) > MaxDoc {
		return errDocTooLarge
	}
	return cmd.Spec.Validate()
}

// admitNewWork is the reference's admission check for new work; subject is
// also refused by a revocation confined to the tenant it acts in (rev). A
// lease renewal passes it too.
func (s *MemStore) admitNewWork(subject subjectKey, rev *tenantRevKey) (Result, bool) {
	switch {
	case !s.available.Load():
		return Result{Outcome: ServiceUnavailable}, true
	case s.draining.Load():
		return Result{Outcome: Draining}, true
	case s.revoked(subject) || s.tenantRevoked(rev):
		return Result{Outcome: Revoked}, true
	}
	return Result{}, false
}

// listingDraft is what a new listing needs that can be made before the
// commit lock is taken (keeping HMACs and copies out of the critical
// section): fresh IDs, their fingerprints, and copies of the caller's spec
// and document.
type listingDraft struct {
	id                    ListingID
	lease                 LeaseID
	presence              Handle
	leaseKey, presenceKey Fingerprint
	doc                   listingDoc
}

func (s *MemStore) draftListing(cmd *CreateListing) *listingDraft {
	d := &listingDraft{doc: packListingDoc(&cmd.Spec, cmd.Doc)}
	s.newListingIDs(d)
	return d
}

func (s *MemStore) newListingIDs(d *listingDraft) {
	d.id, d.lease, d.presence = ListingID{NewUUID()}, LeaseID{NewUUID()}, Handle{NewUUID()}
	leaseCap, presCap := s.keys.Lease(d.lease), s.keys.Presence(d.presence)
	d.leaseKey, d.presenceKey = FingerprintOf(&leaseCap), FingerprintOf(&presCap)
}

// insertListing creates the listing record from d and links it into every
// index. The caller holds the commit lock and has checked every pool and
// quota.
func (s *MemStore) insertListing(d *listingDraft, tk tenantKey, ok subjectKey, now time.Duration) int32 {
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
		proto: spec.ProtocolVersion, public: spec.Visibility == Public, maxPlayers: int32(spec.MaxPlayers),
	}
	for int(li) >= len(s.docs) {
		s.docs = append(s.docs, listingDoc{})
		s.listingIdem = append(s.listingIdem, -1)
	}
	s.docs[li] = d.doc
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
func (s *MemStore) uuidTaken(u UUID) bool {
	_, a := s.listingByID.get(u)
	_, b := s.listingByLease.get(u)
	_, c := s.listingByPresence.get(u)
	_, d := s.attemptByID.get(u)
	_, e := s.attemptByHandle.get(u)
	_, f := s.tombByID.get(u)
	return a || b || c || d || e || f
}
