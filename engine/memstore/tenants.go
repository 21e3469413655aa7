package memstore

import (
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// tenantRec is one tenant with live listings, attempts, idempotency
// records or tombstones. counts is its usage (TenantUsage, checked against
// the tenant quotas in quotas.go), and every record naming the tenant is
// counted there or on tombs: the record is freed when it counts nothing.
type tenantRec struct {
	hashed
	t      engine.Tenant
	counts tenantCounts
	tombs  tombList // its tombstones (tombstone.go)
}

// tombList is the head, tail and length of one tenant's tombstones in
// Store.tombByTenant (an expiryList's header).
type tombList struct{ head, tail, n int32 }

// tenantCounts is a tenant's live listings, attempts and idempotency
// records, kept incrementally where the records are inserted and removed,
// so TenantUsage and the tenant quotas are one lookup.
type tenantCounts struct {
	listings, attempts, idem int
}

// refs is how many records name the tenant.
func (c tenantCounts) refs() int { return c.listings + c.attempts + c.idem }

// tenantKey is a tenant with its seeded hash, computed once per operation,
// before the commit lock is taken.
type tenantKey struct {
	t    engine.Tenant
	hash uint64
}

func (s *Store) tenantKey(t engine.Tenant) tenantKey {
	h := newKeyHasher(s.seed)
	h.str(t.Game)
	h.str(t.Env)
	return tenantKey{t: t, hash: h.sum()}
}

// findTenant returns the slot of k, or -1.
func (s *Store) findTenant(k tenantKey) int32 {
	return chainFind(&s.tenantIdx, &s.tenants, k.hash, func(r *tenantRec) bool { return r.t == k.t })
}

// tenantSlot returns the slot of k, creating it; the caller counts its new
// record in it.
func (s *Store) tenantSlot(k tenantKey) int32 {
	i := s.findTenant(k)
	if i < 0 {
		i = s.tenants.alloc()
		r := s.tenants.at(i)
		r.hash = k.hash
		r.t = engine.Tenant{Game: strings.Clone(k.t.Game), Env: strings.Clone(k.t.Env)} // never a caller's buffer
		chainInsert(&s.tenantIdx, &s.tenants, i)
	}
	return i
}

// tenantUnref frees tenant slot i once it counts no record and holds no
// tombstone (the caller has uncounted its own).
func (s *Store) tenantUnref(i int32) {
	if t := s.tenants.at(i); t.counts == (tenantCounts{}) && t.tombs.n == 0 {
		chainRemove(&s.tenantIdx, &s.tenants, i)
		s.tenants.release(i)
	}
}
