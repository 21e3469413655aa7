package memstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// RenewLease is a compare-and-swap on the version. Order: current_players
// above the listing's max_players (owner's own listing only) -> input error;
// ServiceUnavailable -> Draining -> Revoked(owner, globally or in the
// tenant) -> NotFound -> Conflict (with the current version) -> Success.
// Deciding revocation here, as creations do, lets the server answer a
// renewal with this one call.
func (s *Store) RenewLease(ctx context.Context, cmd engine.RenewLease) (engine.ListingView, engine.Result, error) {
	if err := engine.ValidateRenew(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	owner, rev := s.subjectKey(cmd.Owner), s.tenantRevKey(cmd.Tenant, cmd.Owner)
	now, err := s.begin(ctx)
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	defer s.end()
	li := s.ownedListing(cmd.Tenant, cmd.Owner, cmd.Listing)
	// Field validation comes before any store outcome (docs/contracts/http.md#error-precedence);
	// only the owner's own listing is compared, so nothing leaks.
	if li >= 0 && cmd.CurrentPlayers > int(s.listings.at(li).maxPlayers) {
		return engine.ListingView{}, engine.Result{}, engine.ErrCurrentPlayers
	}
	if r, stop := s.admitNewWork(owner, &rev); stop {
		return engine.ListingView{}, r, nil
	}
	if li < 0 || !s.leaseMatches(li, cmd.Lease, &cmd.LeaseKey) {
		return engine.ListingView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	l := s.listings.at(li)
	if l.version != cmd.ExpectedVersion {
		return s.listingView(li, now), engine.Result{Outcome: engine.Conflict}, nil
	}
	l.version++
	if cmd.CurrentPlayers >= 0 {
		l.players = int32(cmd.CurrentPlayers) // <= MaxPlayers, checked above
	}
	s.renewBrowseEntry(li, &cmd)
	s.leaseExp.refresh(li, now+s.lim.LeaseTTL)
	s.idemExp.refresh(s.listingIdem[li], now+s.lim.IdempotencyTTL)
	return s.listingView(li, now), engine.Result{}, nil
}

// DeleteListing removes the owner's listing, its presence and every linked
// attempt. NotFound if missing, another tenant's or owner's, or the lease ID
// or key is wrong; ServiceUnavailable first once the store is unavailable.
func (s *Store) DeleteListing(ctx context.Context, cmd engine.DeleteListing) (engine.Result, error) {
	if err := cmd.Tenant.Validate(); err != nil {
		return engine.Result{}, err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return engine.Result{}, err
	}
	_, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return res, err
	}
	defer s.end()
	li := s.ownedListing(cmd.Tenant, cmd.Owner, cmd.Listing)
	if li < 0 || !s.leaseMatches(li, cmd.Lease, &cmd.LeaseKey) {
		return engine.Result{Outcome: engine.NotFound}, nil
	}
	s.removeListing(li, engine.EndListingRemoved)
	return engine.Result{}, nil
}

// GetListing finds a listing of q.Tenant; with Joinable its presence must be
// fresh too (the lease is fresh while the listing exists).
func (s *Store) GetListing(ctx context.Context, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	if err := q.Tenant.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	now, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return engine.ListingView{}, res, err
	}
	defer s.end()
	li := s.tenantListing(q.Tenant, q.Listing)
	if li < 0 || (q.Joinable && !s.listings.at(li).fresh) {
		return engine.ListingView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	return s.listingView(li, now), engine.Result{}, nil
}

// tenantListing returns the slot of listing id if it belongs to t, else -1.
func (s *Store) tenantListing(t engine.Tenant, id engine.ListingID) int32 {
	li, ok := s.listingByID.get(id.UUID)
	if !ok {
		return -1
	}
	s.touchLease(li)
	if s.tenants.at(s.listings.at(li).tenant).t != t {
		return -1
	}
	return li
}

// touchLease reads listing slot li's lease node and document entry before
// its record is examined: the three are independent cache misses at a large
// fill, so the CPU overlaps them instead of taking them one after another
// (a renewal and a view need all three). Read-only.
func (s *Store) touchLease(li int32) {
	s.warmSink += uint64(s.leaseExp.nd[li].dl) + uint64(len(s.docs[li].doc))
}

// ownedListing returns the slot of listing id if it belongs to t and owner.
func (s *Store) ownedListing(t engine.Tenant, owner engine.Subject, id engine.ListingID) int32 {
	li := s.tenantListing(t, id)
	if li < 0 || s.subjects.at(s.listings.at(li).owner).name != owner {
		return -1
	}
	return li
}

func (s *Store) leaseMatches(li int32, lease engine.LeaseID, key *engine.Fingerprint) bool {
	l := s.listings.at(li)
	return l.lease == lease && l.leaseKey.Equal(key)
}

// renewBrowseEntry applies renewal cmd (accepted) to listing slot li's
// browse entry: a players change bumps the change version and becomes the
// entry's key version; SetAttributes replaces the attributes (the same
// values keep the slice the listing has, so a renewal repeating them
// allocates nothing).
func (s *Store) renewBrowseEntry(li int32, cmd *engine.RenewLease) {
	cur := s.bents[li]
	changed := false
	if p := s.listings.at(li).players; p != cur.Players {
		cur.Players = p
		s.browseVersion++
		cur.KeyVersion = s.browseVersion
		changed = true
	}
	if cmd.SetAttributes && !cur.Attrs.Equal(cmd.Attributes) {
		cur.Attrs = ownAttrs(cmd.Attributes)
		changed = true
	}
	if changed {
		s.setBrowseEntry(li, &cur)
	}
}

// ownAttrs is a copy of as the store owns (nil when empty).
func ownAttrs(as engine.Attributes) engine.Attributes {
	if len(as) == 0 {
		return nil
	}
	return append(engine.Attributes(nil), as...)
}
