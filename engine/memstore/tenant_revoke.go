package memstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// A tenant revocation confines a revocation to one tenant: the subject may
// do no new work in that tenant until the deadline, and is unaffected in
// every other. A tenant operator can revoke only this way. It shares the
// revocation pool with global revocations (RevokePrincipal).

// tenantRevRec is one tenant revocation; its deadline lives in
// Store.tenantRevHeap.
type tenantRevRec struct {
	hashed
	tenant  engine.Tenant
	subject engine.Subject
}

// tenantRevKey names a tenant revocation with its seeded hash, computed once
// per operation, before the commit lock is taken. It aliases the caller's
// strings (a lookup never keeps them), so making one does not allocate.
type tenantRevKey struct {
	tenant  engine.Tenant
	subject engine.Subject
	hash    uint64
}

func (s *Store) tenantRevKey(t engine.Tenant, subject engine.Subject) tenantRevKey {
	h := newKeyHasher(s.seed)
	h.str(t.Game)
	h.str(t.Env)
	h.str(string(subject))
	return tenantRevKey{tenant: t, subject: subject, hash: h.sum()}
}

// findTenantRev returns the slot of k, or -1.
func (s *Store) findTenantRev(k *tenantRevKey) int32 {
	return chainFind(&s.tenantRevIdx, &s.tenantRevs, k.hash, func(r *tenantRevRec) bool { return r.tenant == k.tenant && r.subject == k.subject })
}

// tenantRevoked reports whether k has a tenant revocation (cleanup has run).
func (s *Store) tenantRevoked(k *tenantRevKey) bool {
	return s.tenantRevs.n > 0 && s.findTenantRev(k) >= 0
}

// nRevocations is the revocation pool's occupancy: global and tenant ones.
func (s *Store) nRevocations() int { return s.revocations.len() + s.tenantRevHeap.len() }

func (s *Store) removeTenantRev(i int32) {
	s.tenantRevHeap.remove(i)
	chainRemove(&s.tenantRevIdx, &s.tenantRevs, i)
	*s.tenantRevs.at(i) = tenantRevRec{} // drop the strings
	s.tenantRevs.release(i)
}

// RevokeTenantPrincipal inserts (or re-times) a revocation of subject in
// tenant only, then removes the listings subject owns in tenant and the
// attempts it created there, through its per-subject lists: O(what the
// subject has), never a scan. removed counts as RevokePrincipal does,
// restricted to tenant. If the revocation pool is full (and the subject is
// not revoked in tenant already) nothing changes.
func (s *Store) RevokeTenantPrincipal(ctx context.Context, tenant engine.Tenant, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	if err := tenant.Validate(); err != nil {
		return 0, engine.Result{}, err
	}
	if err := engine.ValidateRevocation(subject, ttl); err != nil {
		return 0, engine.Result{}, err
	}
	rk, sk, tk := s.tenantRevKey(tenant, subject), s.subjectKey(subject), s.tenantKey(tenant)
	now, locked, res, err := s.beginAvailable(ctx)
	if !locked {
		return 0, res, err
	}
	defer s.end()
	ri := s.findTenantRev(&rk)
	if ri < 0 && s.nRevocations() >= s.lim.MaxRevocations {
		return 0, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolRevocations}, nil
	}
	if ri < 0 {
		ri = s.tenantRevs.alloc()
		r := s.tenantRevs.at(ri)
		r.hash = rk.hash
		// Never a caller's buffer.
		r.tenant = engine.Tenant{Game: strings.Clone(tenant.Game), Env: strings.Clone(tenant.Env)}
		r.subject = engine.Subject(strings.Clone(string(subject)))
		chainInsert(&s.tenantRevIdx, &s.tenantRevs, ri)
	}
	s.tenantRevHeap.set(ri, now+ttl)
	removed := 0
	if ti := s.findTenant(tk); ti >= 0 {
		removed = s.removeSubjectRecords(sk, ti)
	}
	return removed, engine.Result{}, nil
}

// RevokedInTenant reports whether subject may do no new work in tenant: it
// has a live global revocation or one confined to tenant. A read under the
// shared lock, like Revoked.
func (s *Store) RevokedInTenant(ctx context.Context, tenant engine.Tenant, subject engine.Subject) (bool, error) {
	if err := tenant.Validate(); err != nil {
		return false, err
	}
	if err := subject.Validate(); err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	sk, rk := s.subjectKey(subject), s.tenantRevKey(tenant, subject)
	s.mu.RLock()
	defer s.mu.RUnlock()
	now := s.clock.Now()
	if s.revokedAt(sk, now) {
		return true, nil
	}
	i := s.findTenantRev(&rk)
	return i >= 0 && s.tenantRevHeap.deadline(i) > now, nil
}

// verifyTenantRevocations checks each tenant revocation is found by its key
// and scheduled (for CheckInvariants).
func (s *Store) verifyTenantRevocations() error {
	for i, r := range s.tenantRevs.all() {
		k := s.tenantRevKey(r.tenant, r.subject)
		if s.findTenantRev(&k) != i || !s.tenantRevHeap.has(i) {
			return fmt.Errorf("tenant revocation slot %d not found by its key or not scheduled", i)
		}
	}
	if s.tenantRevHeap.len() != s.tenantRevs.n {
		return fmt.Errorf("tenant revocation schedule has %d, want %d", s.tenantRevHeap.len(), s.tenantRevs.n)
	}
	return nil
}
