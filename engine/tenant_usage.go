package engine

import "fmt"

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

// tenantCounts is what a tenant record counts for TenantUsage besides its
// attempts (tenantRec.attempts, kept for the attempt quota): its live
// listings and idempotency records. Kept incrementally where the records
// are inserted and removed, so TenantUsage is one lookup.
type tenantCounts struct {
	listings, idem int
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
		u.Listings.Used, u.Attempts.Used, u.Idempotency.Used = r.counts.listings, r.attempts, r.counts.idem
	}
	return u
}

// verifyTenantCounts recounts every tenant's listings and idempotency
// records from the primary records (for CheckInvariants).
func (s *MemStore) verifyTenantCounts() error {
	want := make(map[int32]tenantCounts)
	for li := int32(0); int(li) < s.listings.size(); li++ {
		if s.listings.live(li) {
			c := want[s.listings.at(li).tenant]
			c.listings++
			want[s.listings.at(li).tenant] = c
		}
	}
	for i := int32(0); int(i) < s.idem.size(); i++ {
		if s.idem.live(i) {
			r := s.idem.at(i)
			if !s.tenants.live(r.tenant) {
				return fmt.Errorf("idempotency slot %d names a free tenant slot", i)
			}
			c := want[r.tenant]
			c.idem++
			want[r.tenant] = c
		}
	}
	for ti := int32(0); int(ti) < s.tenants.size(); ti++ {
		if s.tenants.live(ti) && s.tenants.at(ti).counts != want[ti] {
			r := s.tenants.at(ti)
			return fmt.Errorf("tenant %v counts %+v, records %+v", r.t, r.counts, want[ti])
		}
	}
	return nil
}
