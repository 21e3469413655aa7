package refstore

import "github.com/rendezvous/rendezvous/engine"

// creation is what the admission of one new listing or attempt weighs: its
// kind's pool and how full it is, its creator's entries of that kind and
// their quota, and its tenant's entries and fair-share quota.
type creation struct {
	tenant                          engine.Tenant
	subject                         engine.Subject
	pool, subjectQuota, tenantQuota engine.Pool
	used, max                       int
	mine, mineMax                   int
	inTenant, tenantMax             int
}

// admit checks a creation in the reference's order: the kind's pool, the
// idempotency pool, the creator's quota and idempotency records, then the
// tenant's fair share of both pools. The idempotency counts are full scans,
// as in the reference. The zero Result admits it.
func (s *Store) admit(c creation) engine.Result {
	shed := func(p engine.Pool) engine.Result { return engine.Result{Outcome: engine.CapacityExceeded, Pool: p} }
	switch {
	case c.used >= c.max:
		return shed(c.pool)
	case len(s.idempotency) >= s.lim.MaxIdempotency:
		return shed(engine.PoolIdempotency)
	case c.mine >= c.mineMax:
		return shed(c.subjectQuota)
	case s.idempotencyCount(func(e *idemEntry) bool { return e.subject == c.subject }) >= s.lim.SubjectIdempotencyQuota:
		return shed(engine.QuotaSubjectIdempotency)
	case !engine.FairShare(c.inTenant, c.used, c.max, c.tenantMax):
		return shed(c.tenantQuota)
	case !engine.FairShare(s.idempotencyCount(func(e *idemEntry) bool { return e.tenant == c.tenant }),
		len(s.idempotency), s.lim.MaxIdempotency, s.lim.TenantIdempotencyQuota):
		return shed(engine.QuotaTenantIdempotency)
	}
	return engine.Result{}
}

// idempotencyCount counts the idempotency records that match by scanning
// them all.
func (s *Store) idempotencyCount(match func(*idemEntry) bool) int {
	n := 0
	for _, e := range s.idempotency {
		if match(e) {
			n++
		}
	}
	return n
}
