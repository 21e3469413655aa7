package redisstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// A listing lives in the hash "l:<id>", its lease deadline in the sorted set
// "lexp", its presence in the field <id> of the hash "pr" (with the fresh
// presence's deadline, also found at that time or earlier in "pexp": see
// presenceDue), its oldest pending offers in the field <id> of "pn"; "ph"
// maps presence handles to listings, "ol:<owner>" is the owner's set, and
// "b:<tenant>\0<protocol>\0[region]" the browse indexes
// (scripts/prelude.lua).

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// CreateListing registers a listing: one call. The IDs are made here, the
// presence handle derives from the listing ID (presenceHandle) and only the
// fingerprints of the capabilities are sent.
func (s *Store) CreateListing(ctx context.Context, cmd engine.CreateListing) (engine.ListingView, engine.Result, error) {
	if err := engine.ValidateCreateListing(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	if s.reg.draining.Load() {
		return engine.ListingView{}, instanceDraining, nil
	}
	for {
		m, ok, err := s.call(ctx, "rdv_create_listing", s.createListingArgs(&cmd)...)
		if err != nil {
			return engine.ListingView{}, engine.Result{}, err
		}
		code, r, rest := reply(m, ok)
		if code == codeRetry {
			continue // an ID collided (astronomically unlikely); nothing was written
		}
		return s.listingResult(r, rest)
	}
}

// createListingArgs makes fresh IDs for a validated registration and
// renders rdv_create_listing's arguments.
func (s *Store) createListingArgs(cmd *engine.CreateListing) []string {
	spec, err := json.Marshal(&cmd.Spec)
	if err != nil {
		panic("BUG: a ListingSpec does not encode: " + err.Error())
	}
	fp := cmd.Spec.Hash()
	ik := packKey('l', cmd.Tenant.Game, cmd.Tenant.Env, string(cmd.Owner), cmd.IdempotencyKey)
	id, lease := engine.ListingID{UUID: engine.NewUUID()}, engine.LeaseID{UUID: engine.NewUUID()}
	pres := s.presenceHandle(id)
	lc, pc := s.keys.Lease(lease), s.keys.Presence(pres)
	lk, pk := engine.FingerprintOf(&lc), engine.FingerprintOf(&pc)
	return []string{tenantArg(cmd.Tenant), string(cmd.Owner), ik, hex.EncodeToString(fp[:]),
		uuidArg(id.UUID), uuidArg(lease.UUID), uuidArg(pres.UUID), fpArg(&lk), string(appendPresenceField(nil, id.UUID, &pk)), string(spec), string(cmd.Doc),
		strconv.Itoa(cmd.Spec.CurrentPlayers), strconv.Itoa(cmd.Spec.MaxPlayers),
		strconv.FormatUint(uint64(cmd.Spec.ProtocolVersion), 10), boolArg(cmd.Spec.Visibility == engine.Public), cmd.Spec.Region}
}

// listingResult completes a result whose rest may be {replay, view}.
func (s *Store) listingResult(r engine.Result, rest []rueidis.RedisMessage) (engine.ListingView, engine.Result, error) {
	if len(rest) < 2 {
		return engine.ListingView{}, r, nil
	}
	v, ok := s.listingView(rest[1])
	if !ok {
		return engine.ListingView{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	r.Replay = replayFlag(rest)
	return v, r, nil
}

func (s *Store) RenewLease(ctx context.Context, cmd engine.RenewLease) (engine.ListingView, engine.Result, error) {
	if err := engine.ValidateRenew(&cmd); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	players := cmd.CurrentPlayers
	if players < 0 {
		players = -1
	}
	m, ok, err := s.call(ctx, "rdv_renew_lease", tenantArg(cmd.Tenant), string(cmd.Owner), uuidArg(cmd.Listing.UUID),
		uuidArg(cmd.Lease.UUID), fpArg(&cmd.LeaseKey), strconv.FormatUint(cmd.ExpectedVersion, 10), strconv.Itoa(players))
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
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
	m, ok, err := s.call(ctx, "rdv_delete_listing", tenantArg(cmd.Tenant), string(cmd.Owner), uuidArg(cmd.Listing.UUID),
		uuidArg(cmd.Lease.UUID), fpArg(&cmd.LeaseKey))
	if err != nil {
		return engine.Result{}, err
	}
	_, r, _ := reply(m, ok)
	return r, nil
}

func (s *Store) GetListing(ctx context.Context, q engine.GetListing) (engine.ListingView, engine.Result, error) {
	if err := q.Tenant.Validate(); err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	m, ok, err := s.call(ctx, "rdv_get_listing", tenantArg(q.Tenant), uuidArg(q.Listing.UUID), boolArg(q.Joinable))
	if err != nil {
		return engine.ListingView{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	return s.listingResult(r, rest)
}

func (s *Store) BrowseVisible(ctx context.Context, q engine.Browse, dst []engine.ListingView) ([]engine.ListingView, bool, engine.Result, error) {
	if err := engine.ValidateBrowse(&q); err != nil {
		return dst, false, engine.Result{}, err
	}
	after := ""
	if q.HasAfter {
		after = uuidArg(q.After.UUID)
	}
	m, ok, err := s.call(ctx, "rdv_browse", tenantArg(q.Tenant), strconv.FormatUint(uint64(q.ProtocolVersion), 10),
		q.Region, after, strconv.Itoa(q.Limit))
	if err != nil {
		return dst, false, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if r.Outcome != engine.Success || len(rest) < 2 {
		return dst, false, r, nil
	}
	views, _ := rest[1].ToArray()
	n := len(dst)
	for _, vm := range views {
		v, ok := s.listingView(vm)
		if !ok {
			return dst[:n], false, engine.Result{Outcome: engine.ServiceUnavailable}, nil
		}
		dst = append(dst, v)
	}
	return dst, replayFlag(rest), r, nil
}
