package memstore

import "github.com/rendezvous/rendezvous/engine"

// TenantUsage reports t's usage after cleanup (expired records are never
// counted). A tenant with nothing live, or an invalid one (nothing can be
// stored under it), has zero usage.
func (s *Store) TenantUsage(t engine.Tenant) engine.TenantUsage {
	u := s.lim.TenantQuotas()
	if t.Validate() != nil {
		return u
	}
	k := s.tenantKey(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanup(s.clock.Now())
	if i := s.findTenant(k); i >= 0 {
		r := s.tenants.at(i)
		u.Listings.Used, u.Attempts.Used, u.Idempotency.Used = r.counts.listings, r.counts.attempts, r.counts.idem
	}
	return u
}
