package memstore

import "github.com/rendezvous/rendezvous/engine"

// Policy quotas (docs/contracts/semantics.md#quotas: evaluated inside the
// creating transition, after the global pools). The principal's own quota is
// checked before its tenant's, so a caller over its own share is told so; the
// tenant's share of the idempotency pool comes last. Every count read here is
// kept incrementally (subjectRec lists and tenantRec.counts): no scans.

// listingQuota returns the quota a new listing of owner in tenant would
// exceed, or PoolNone.
func (s *Store) listingQuota(owner subjectKey, tenant tenantKey) engine.Pool {
	if oi := s.findSubject(owner); oi >= 0 && int(s.subjects.at(oi).listings.n) >= s.lim.OwnerListingQuota {
		return engine.QuotaOwnerListings
	}
	if ti := s.findTenant(tenant); ti >= 0 {
		t := s.tenants.at(ti)
		return s.tenantQuota(t, t.counts.listings, s.lim.TenantListingQuota, engine.QuotaTenantListings)
	}
	return engine.PoolNone
}

// attemptQuota returns the quota a new attempt of client in tenant slot ti
// would exceed, or PoolNone.
func (s *Store) attemptQuota(client subjectKey, ti int32) engine.Pool {
	if ci := s.findSubject(client); ci >= 0 && int(s.subjects.at(ci).attempts.n) >= s.lim.SubjectAttemptQuota {
		return engine.QuotaSubjectAttempts
	}
	t := s.tenants.at(ti)
	return s.tenantQuota(t, t.counts.attempts, s.lim.TenantAttemptQuota, engine.QuotaTenantAttempts)
}

// tenantQuota returns p when the tenant holds its quota of the kind being
// created (held), else QuotaTenantIdempotency when its share of the
// idempotency pool is used up, else PoolNone.
func (s *Store) tenantQuota(t *tenantRec, held, quota int, p engine.Pool) engine.Pool {
	switch {
	case held >= quota:
		return p
	case t.counts.idem >= s.lim.TenantIdempotencyQuota:
		return engine.QuotaTenantIdempotency
	}
	return engine.PoolNone
}
