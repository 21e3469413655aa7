package engine

import "strings"

// tenantRec is one tenant with live listings, attempts or idempotency
// records. attempts is its live attempt count (the tenant attempt quota),
// counts the rest of its usage (tenant_usage.go: listings and idempotency
// records, checked against their tenant quotas in quotas.go); refs counts
// the records naming it, and the record is freed at zero.
type tenantRec struct {
	hashed
	t        Tenant
	attempts int
	counts   tenantCounts
	refs     int
}

// tenantKey is a tenant with its seeded hash, computed once per operation,
// before the commit lock is taken.
type tenantKey struct {
	t    Tenant
	hash uint64
}

func (s *MemStore) tenantKey(t Tenant) tenantKey {
	h := newKeyHasher(s.seed)
	h.str(t.Game)
	h.str(t.Env)
	return tenantKey{t: t, hash: h.sum()}
}

// findTenant returns the slot of k, or -1.
func (s *MemStore) findTenant(k tenantKey) int32 {
	for i := s.tenantIdx.head(k.hash); i >= 0; {
		r := s.tenants.at(i)
		if r.hash == k.hash && r.t == k.t {
			return i
		}
		i = r.next
	}
	return -1
}

// tenantRef returns the slot of k (creating it) with one more reference.
func (s *MemStore) tenantRef(k tenantKey) int32 {
	i := s.findTenant(k)
	if i < 0 {
		i = s.tenants.alloc()
		r := s.tenants.at(i)
		r.hash = k.hash
		r.t = Tenant{Game: strings.Clone(k.t.Game), Env: strings.Clone(k.t.Env)} // never a caller's buffer
		chainInsert(&s.tenantIdx, &s.tenants, i)
	}
	s.tenants.at(i).refs++
	return i
}

// tenantUnref drops one reference and frees the record at zero.
func (s *MemStore) tenantUnref(i int32) {
	r := s.tenants.at(i)
	r.refs--
	if r.refs == 0 {
		chainRemove(&s.tenantIdx, &s.tenants, i)
		s.tenants.release(i)
	}
}
