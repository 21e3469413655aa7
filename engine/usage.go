package engine

// TenantUsage is one tenant's share of the bounded state: for its listings,
// attempts and idempotency records, how many are live (Used) and the quota
// the tenant is held to (Ceiling), so its headroom is Ceiling - Used. Its
// fair share (FairShare) may refuse earlier while other tenants hold
// records of the pool.
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
