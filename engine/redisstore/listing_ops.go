package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

// A listing's renewal, deletion and reading: one call each
// (renew_lease.lua, delete_listing.lua, get_listing.lua).

func (s *Store) RenewLease(ctx context.Context, cmd engine.RenewLease) (engine.ListingView, engine.Result, error) {
	if err := engine.ValidateRenew(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	players := cmd.CurrentPlayers
	if players < 0 {
		players = -1
	}
	var a [rnArgs]string
	a[rnTenant], a[rnOwner], a[rnListing] = tenantArg(cmd.Tenant), string(cmd.Owner), uuidArg(cmd.Listing.UUID)
	a[rnLease], a[rnLeaseKey] = uuidArg(cmd.Lease.UUID), fpArg(&cmd.LeaseKey)
	a[rnVersion], a[rnPlayers] = strconv.FormatUint(cmd.ExpectedVersion, 10), strconv.Itoa(players)
	a[rnSetAttrs], a[rnAttrs] = boolArg(cmd.SetAttributes), attrsArg(cmd.Attributes)
	m, ok, nr, err := s.callAcked(ctx, "rdv_renew_lease", a[:]...)
	if err != nil || nr {
		return engine.ListingView{}, unconfirmed(nr), err
	}
	code, r, rest := reply(m, ok)
	if code == codeBadPlayers {
		return engine.ListingView{}, engine.Result{}, engine.ErrCurrentPlayers
	}
	return s.listingResult(r, rest)
}

func (s *Store) DeleteListing(ctx context.Context, cmd engine.DeleteListing) (engine.Result, error) {
	if err := cmd.Tenant.Validate(); err != nil {
		return engine.Result{}, err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return engine.Result{}, err
	}
	var a [dlArgs]string
	a[dlTenant], a[dlOwner], a[dlListing] = tenantArg(cmd.Tenant), string(cmd.Owner), uuidArg(cmd.Listing.UUID)
	a[dlLease], a[dlLeaseKey] = uuidArg(cmd.Lease.UUID), fpArg(&cmd.LeaseKey)
	m, ok, nr, err := s.callAcked(ctx, "rdv_delete_listing", a[:]...)
	if err != nil || nr {
		return unconfirmed(nr), err
	}
	_, r, _ := reply(m, ok)
	return r, nil
}

func (s *Store) GetListing(ctx context.Context, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	return s.getListing(ctx, q, "")
}

// getListing is GetListing; a subject other than "" is answered Revoked
// while it has a live revocation, global or confined to q.Tenant
// (GetListingAs).
func (s *Store) getListing(ctx context.Context, q engine.GetListing, subject engine.Subject) (engine.ListingView, engine.Result, error) {
	if err := q.Tenant.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	m, ok, err := s.call(ctx, "rdv_get_listing", tenantArg(q.Tenant), uuidArg(q.Listing.UUID), boolArg(q.Joinable), string(subject))
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if len(rest) < 2 {
		return engine.ListingView{}, r, nil
	}
	v, vok := s.listingRead(rest[1], q.Listing, q.Tenant)
	if !vok {
		return engine.ListingView{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	return v, r, nil
}
