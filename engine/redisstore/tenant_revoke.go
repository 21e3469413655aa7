package redisstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Revocations confined to a tenant: members "t\0<tenant>\0<subject>" of
// "vexp", by the same calls as the global ones (revoke.go).

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

// RevokedInTenant reports a live global revocation or one confined to
// tenant; ErrUnavailable when Redis does not answer.
func (s *Store) RevokedInTenant(ctx context.Context, tenant engine.Tenant, subject engine.Subject) (bool, error) {
	if err := tenant.Validate(); err != nil {
		return false, err
	}
	if err := subject.Validate(); err != nil {
		return false, err
	}
	return s.revoked(ctx, &tenant, subject)
}
