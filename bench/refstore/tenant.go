package refstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// tenantSubject keys a revocation confined to one tenant.
type tenantSubject struct {
	tenant  engine.Tenant
	subject engine.Subject
}

// nRevocations is the revocation pool's occupancy: global and tenant ones.
func (s *Store) nRevocations() int { return len(s.revocations) + len(s.tenantRevocations) }

// TenantUsage counts the tenant's records by scanning every listing,
// attempt and idempotency record.
func (s *Store) TenantUsage(t engine.Tenant) engine.TenantUsage {
	u := s.lim.TenantQuotas()
	s.gate.Lock()
	defer s.gate.Unlock()
	s.cleanup(s.clock.Now())
	for _, l := range s.listings {
		if l.tenant == t {
			u.Listings.Used++
		}
	}
	for _, a := range s.attempts {
		if a.tenant == t {
			u.Attempts.Used++
		}
	}
	for _, e := range s.idempotency {
		if e.tenant == t {
			u.Idempotency.Used++
		}
	}
	return u
}

// RevokeTenantPrincipal scans every listing and attempt for the subject's
// records in tenant.
func (s *Store) RevokeTenantPrincipal(ctx context.Context, tenant engine.Tenant, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	return s.revoke(ctx, &tenant, subject, ttl)
}

func (s *Store) RevokedInTenant(ctx context.Context, tenant engine.Tenant, subject engine.Subject) (bool, error) {
	if err := tenant.Validate(); err != nil {
		return false, err
	}
	return s.revokedIn(ctx, &tenant, subject)
}
