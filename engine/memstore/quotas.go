package memstore

import "github.com/rendezvous/rendezvous/engine"

// Policy quotas (docs/contracts/semantics.md#quotas: evaluated inside the
// creating transition, after the global pools). The principal's own quota is
// checked before its tenant's, so a caller over its own share is told so; the
// tenant's share of the idempotency pool comes last; the principal's share of
// it follows its own quota of the kind created. Every count read here is kept
// incrementally (subjectRec lists and counts, tenantRec.counts): no scans.

// listingQuota returns the quota a new listing of owner in tenant would
// exceed, or PoolNone.
func (s *Store) listingQuota(owner subjectKey, tenant tenantKey) engine.Pool {
	if p := s.subjectQuota(owner, ownedListings, s.lim.OwnerListingQuota, engine.QuotaOwnerListings); p != engine.PoolNone {
		return p
	}
	if ti := s.findTenant(tenant); ti >= 0 {
		t := s.tenants.at(ti)
		return s.tenantQuota(t, t.counts.listings, s.listings.n, s.lim.MaxListings, s.lim.TenantListingQuota, engine.QuotaTenantListings)
	}
	return engine.PoolNone
}

// attemptQuota returns the quota a new attempt of client in tenant slot ti
// would exceed, or PoolNone.
func (s *Store) attemptQuota(client subjectKey, ti int32) engine.Pool {
	if p := s.subjectQuota(client, createdAttempts, s.lim.SubjectAttemptQuota, engine.QuotaSubjectAttempts); p != engine.PoolNone {
		return p
	}
	t := s.tenants.at(ti)
	return s.tenantQuota(t, t.counts.attempts, s.attempts.n, s.lim.MaxAttempts, s.lim.TenantAttemptQuota, engine.QuotaTenantAttempts)
}

// subjectQuota returns p when subject k holds its own quota of the kind
// being created (held reads that list from its record), else
// QuotaSubjectIdempotency when its share of the idempotency pool is used
// up, else PoolNone (a subject without a record holds nothing).
func (s *Store) subjectQuota(k subjectKey, held func(*subjectRec) *listHead, quota int, p engine.Pool) engine.Pool {
	i := s.findSubject(k)
	if i < 0 {
		return engine.PoolNone
	}
	switch r := s.subjects.at(i); {
	case int(held(r).n) >= quota:
		return p
	case int(r.idem) >= s.lim.SubjectIdempotencyQuota:
		return engine.QuotaSubjectIdempotency
	}
	return engine.PoolNone
}

func ownedListings(r *subjectRec) *listHead   { return &r.listings }
func createdAttempts(r *subjectRec) *listHead { return &r.attempts }

// tenantQuota returns p when the tenant holds its share of the pool of the
// kind being created (held of the pool's used, at most pool), else
// QuotaTenantIdempotency when its share of the idempotency pool is used
// up, else PoolNone.
func (s *Store) tenantQuota(t *tenantRec, held, used, pool, quota int, p engine.Pool) engine.Pool {
	switch {
	case !engine.FairShare(held, used, pool, quota):
		return p
	case !engine.FairShare(t.counts.idem, s.idem.n, s.lim.MaxIdempotency, s.lim.TenantIdempotencyQuota):
		return engine.QuotaTenantIdempotency
	}
	return engine.PoolNone
}
