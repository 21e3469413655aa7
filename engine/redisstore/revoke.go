package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Revocations share the sorted set "vexp" (member "g\0<subject>" or
// "t\0<tenant>\0<subject>", scored by deadline): revoke_principal.lua
// inserts them, revoked.lua reads them, and each instance keeps a copy
// (browse_revocations.go). The tenant-confined methods are in
// tenant_revoke.go.

func (s *Store) RevokeListing(ctx context.Context, cmd engine.RevokeListing) (engine.Result, error) {
	if !cmd.AnyTenant {
		if err := cmd.Tenant.Validate(); err != nil {
			return engine.Result{}, err
		}
	}
	m, ok, nr, err := s.callAcked(ctx, "rdv_revoke_listing", boolArg(cmd.AnyTenant), tenantArg(cmd.Tenant), uuidArg(cmd.Listing.UUID))
	if err != nil || nr {
		return unconfirmed(nr), err
	}
	_, r, _ := reply(m, ok)
	return r, nil
}

// RevokePrincipal inserts (or re-times) a revocation of subject and removes
// every listing it owns and attempt it created, in one call.
func (s *Store) RevokePrincipal(ctx context.Context, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	if err := engine.ValidateRevocation(subject, ttl); err != nil {
		return 0, engine.Result{}, err
	}
	return s.revoke(ctx, "", subject, ttl)
}

func (s *Store) revoke(ctx context.Context, tenant string, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	m, ok, nr, err := s.callAcked(ctx, "rdv_revoke_principal", tenant, string(subject), strconv.FormatInt(int64(ttl/s.tick), 10))
	if err != nil || nr {
		return 0, unconfirmed(nr), err
	}
	_, r, rest := reply(m, ok)
	if r.Outcome != engine.Success || len(rest) < 1 {
		return 0, r, nil
	}
	return int(num(rest[0])), r, nil
}

// Revoked reports a live global revocation; ErrUnavailable when Redis does
// not answer.
func (s *Store) Revoked(ctx context.Context, subject engine.Subject) (bool, error) {
	if err := subject.Validate(); err != nil {
		return false, err
	}
	return s.revoked(ctx, nil, subject)
}
