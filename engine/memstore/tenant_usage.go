package engine

// TenantUsage is one tenant's share of the bounded state: for its listings,
// attempts and idempotency records, how many are live (Used) and the quota
// the tenant is held to (Ceiling), so its headroom is Ceiling - Used. A
// global pool (Stats) that other tenants fill may refuse earlier.
type TenantUsage struct {
	Listings, Attempts, Idempotency PoolStat
}

// TenantQuotas is the quota each of a tenant's pools is held to (Limits'
// tenant quotas). Used is zero.
func (l Limits) TenantQuotas() TenantUsage {
	return TenantUsage{
		Listings:    PoolStat{Ceiling: l.TenantListingQuota},
		Attempts:    PoolStat{Ceiling: l.TenantAttemptQuota},
		Idempotency: PoolStat{Ceiling: l.TenantIdempotencyQuota},
	}
}

// TenantUsage reports t's usage after cleanup (expired records are never
// counted). A tenant with nothing live, or an invalid one (nothing can be
// stored under it), has zero usage.
func (s *MemStore) TenantUsage(t Tenant) TenantUsage {
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
