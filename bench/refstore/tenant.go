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
	if err := tenant.Validate(); err != nil {
		return 0, engine.Result{}, err
	}
	if err := subject.Validate(); err != nil {
		return 0, engine.Result{}, err
	}
	if ttl < time.Second || ttl > engine.MaxRevocationTTL {
		return 0, engine.Result{}, inputErr("ttl_s", "must be 1..600 seconds")
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return 0, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return 0, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	key := tenantSubject{tenant, subject}
	if _, ok := s.tenantRevocations[key]; !ok && s.nRevocations() >= s.lim.MaxRevocations {
		return 0, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolRevocations}, nil
	}
	s.tenantRevocations[key] = now + ttl
	var listings []engine.ListingID
	for id, l := range s.listings {
		if l.owner == subject && l.tenant == tenant {
			listings = append(listings, id)
		}
	}
	var attempts []engine.AttemptID
	for id, a := range s.attempts {
		if a.client == subject && a.tenant == tenant {
			attempts = append(attempts, id)
		}
	}
	for _, id := range listings {
		s.removeListing(id)
	}
	for _, id := range attempts {
		s.removeAttempt(id)
	}
	return len(listings) + len(attempts), engine.Result{}, nil
}

func (s *Store) RevokedInTenant(ctx context.Context, tenant engine.Tenant, subject engine.Subject) (bool, error) {
	if err := tenant.Validate(); err != nil {
		return false, err
	}
	if err := subject.Validate(); err != nil {
		return false, err
	}
	if _, err := s.atomic(ctx); err != nil {
		return false, err
	}
	defer s.gate.Unlock()
	_, global := s.revocations[subject]
	_, inTenant := s.tenantRevocations[tenantSubject{tenant, subject}]
	return global || inTenant, nil
}
