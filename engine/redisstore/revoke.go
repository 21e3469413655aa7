package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Revocations share the sorted set "vexp" (member "g\0<subject>" or
// "t\0<tenant>\0<subject>", scored by deadline); replay tickets are the
// members of "rexp".

func (s *Store) RevokeListing(ctx context.Context, cmd engine.RevokeListing) (engine.Result, error) {
	if !cmd.AnyTenant {
		if err := cmd.Tenant.Validate(); err != nil {
			return engine.Result{}, err
		}
	}
	m, ok, err := s.call(ctx, "rdv_revoke_listing", boolArg(cmd.AnyTenant), tenantArg(cmd.Tenant), uuidArg(cmd.Listing.UUID))
	if err != nil {
		return engine.Result{}, err
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

// RevokeTenantPrincipal is RevokePrincipal confined to tenant.
func (s *Store) RevokeTenantPrincipal(ctx context.Context, tenant engine.Tenant, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	if err := tenant.Validate(); err != nil {
		return 0, engine.Result{}, err
	}
	if err := engine.ValidateRevocation(subject, ttl); err != nil {
		return 0, engine.Result{}, err
	}
	return s.revoke(ctx, tenantArg(tenant), subject, ttl)
}

func (s *Store) revoke(ctx context.Context, tenant string, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	m, ok, err := s.call(ctx, "rdv_revoke_principal", tenant, string(subject), strconv.FormatInt(int64(ttl/s.tick), 10))
	if err != nil {
		return 0, engine.Result{}, err
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
	return s.revoked(ctx, "", subject)
}

// RevokedInTenant reports a live global revocation or one confined to
// tenant; ErrUnavailable when Redis does not answer.
func (s *Store) RevokedInTenant(ctx context.Context, tenant engine.Tenant, subject engine.Subject) (bool, error) {
	if err := tenant.Validate(); err != nil {
		return false, err
	}
	if err := subject.Validate(); err != nil {
		return false, err
	}
	return s.revoked(ctx, tenantArg(tenant), subject)
}

func (s *Store) revoked(ctx context.Context, tenant string, subject engine.Subject) (bool, error) {
	m, ok, err := s.call(ctx, "rdv_revoked", tenant, string(subject))
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrUnavailable
	}
	return num(m) == 1, nil
}

// ConsumeReplay consumes a one-time ticket.
func (s *Store) ConsumeReplay(ctx context.Context, cmd engine.ConsumeReplay) (engine.Result, error) {
	life, err := engine.ValidateReplay(&cmd, s.lim.ReplayTTL)
	if err != nil {
		return engine.Result{}, err
	}
	m, ok, err := s.call(ctx, "rdv_consume_replay", packKey('r', cmd.Namespace, cmd.Key), strconv.FormatInt(int64(life/s.tick), 10))
	if err != nil {
		return engine.Result{}, err
	}
	_, r, _ := reply(m, ok)
	return r, nil
}
