package engine

// Policy quotas (ADR 0004: evaluated inside the creating transition, after
// the global pools). The principal's own quota is checked before its
// tenant's, so a caller over its own share is told so; the tenant's share of
// the idempotency pool comes last. Every count read here is kept
// incrementally (subjectRec lists and tenantRec.counts): no scans.

// listingQuota returns the quota a new listing of owner in tenant would
// exceed, or PoolNone.
func (s *MemStore) listingQuota(owner subjectKey, tenant tenantKey) Pool {
	if oi := s.findSubject(owner); oi >= 0 && int(s.subjects.at(oi).listings.n) >= s.lim.OwnerListingQuota {
		return QuotaOwnerListings
	}
	if ti := s.findTenant(tenant); ti >= 0 {
		t := s.tenants.at(ti)
		return s.tenantQuota(t, t.counts.listings, s.lim.TenantListingQuota, QuotaTenantListings)
	}
	return PoolNone
}

// attemptQuota returns the quota a new attempt of client in tenant slot ti
// would exceed, or PoolNone.
func (s *MemStore) attemptQuota(client subjectKey, ti int32) Pool {
	if ci := s.findSubject(client); ci >= 0 && int(s.subjects.at(ci).attempts.n) >= s.lim.SubjectAttemptQuota {
		return QuotaSubjectAttempts
	}
	t := s.tenants.at(ti)
	return s.tenantQuota(t, t.counts.attempts, s.lim.TenantAttemptQuota, QuotaTenantAttempts)
}

// tenantQuota returns p when the tenant holds its quota of the kind being
// created (held), else QuotaTenantIdempotency when its share of the
// idempotency pool is used up, else PoolNone.
func (s *MemStore) tenantQuota(t *tenantRec, held, quota int, p Pool) Pool {
	switch {
	case held >= quota:
		return p
	case t.counts.idem >= s.lim.TenantIdempotencyQuota:
		return QuotaTenantIdempotency
	}
	return PoolNone
}
