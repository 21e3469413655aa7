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
// (scripts/prelude/30_presence_record.lua).

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
		m, ok, nr, err := s.callAcked(ctx, "rdv_create_listing", s.createListingArgs(&cmd)...)
		if err != nil || nr {
			return engine.ListingView{}, unconfirmed(nr), err
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
	var a [clArgs]string
	a[clTenant], a[clOwner], a[clIdem], a[clRequest] = tenantArg(cmd.Tenant), string(cmd.Owner), ik, hex.EncodeToString(fp[:])
	a[clListing], a[clLease], a[clPresence] = uuidArg(id.UUID), uuidArg(lease.UUID), uuidArg(pres.UUID)
	a[clLeaseKey], a[clPresenceField] = fpArg(&lk), string(appendPresenceField(nil, id.UUID, &pk))
	a[clSpec], a[clDoc] = string(spec), string(cmd.Doc)
	a[clPlayers], a[clMaxPlayers] = strconv.Itoa(cmd.Spec.CurrentPlayers), strconv.Itoa(cmd.Spec.MaxPlayers)
	a[clProtocol] = strconv.FormatUint(uint64(cmd.Spec.ProtocolVersion), 10)
	a[clPublic], a[clRegion] = boolArg(cmd.Spec.Visibility == engine.Public), cmd.Spec.Region
	a[clAttrs] = attrsArg(cmd.Spec.Attributes)
	return a[:]
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
