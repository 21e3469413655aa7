package httpapi

import (
	"sync"

	"github.com/rendezvous/rendezvous/engine"
)

// regionInterner maps a tenant's region names to shared strings, so a
// browse filter naming a region of a live listing becomes a string without
// allocating. Only real regions get in: those of listings created through
// the API, and those a browse found listings in; a browse of a made-up
// region only looks up, and allocates its string. Each tenant has its own
// bounded table, so no tenant (its clients or its publishers) can crowd
// out another's regions. A table is two generations of up to
// maxRegionsPerTenant each: when the current one fills, it becomes the
// previous one and the oldest is dropped; a region seen again in the
// previous generation moves back to the current one. Safe for concurrent
// use.
type regionInterner struct {
	mu      sync.RWMutex
	tenants map[engine.Tenant]*regionTable
	max     int // per tenant and generation
}

type regionTable struct{ cur, prev map[string]string }

// maxRegionsPerTenant bounds one generation of a tenant's region table.
const maxRegionsPerTenant = 1024

func newRegionInterner(max int) *regionInterner {
	return &regionInterner{tenants: map[engine.Tenant]*regionTable{}, max: max}
}

// lookup returns tenant's interned copy of b, if any, and whether it is
// in the current generation (an add of it would change nothing). It never
// allocates and never adds.
func (in *regionInterner) lookup(tenant engine.Tenant, b []byte) (s string, ok, current bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	t := in.tenants[tenant]
	if t == nil {
		return "", false, false
	}
	if s, ok := t.cur[string(b)]; ok {
		return s, true, true
	}
	s, ok = t.prev[string(b)]
	return s, ok, false
}

// add interns s, a region that has live listings in tenant, and returns
// the interned copy.
func (in *regionInterner) add(tenant engine.Tenant, s string) string {
	if v, ok := in.lookupCurrent(tenant, s); ok {
		return v
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	t := in.tenants[tenant]
	if t == nil {
		t = &regionTable{cur: map[string]string{}}
		in.tenants[tenant] = t
	}
	if v, ok := t.cur[s]; ok {
		return v
	}
	if v, ok := t.prev[s]; ok {
		s = v // keep the copy listings already share
	}
	if len(t.cur) >= in.max {
		t.prev, t.cur = t.cur, make(map[string]string, in.max)
	}
	t.cur[s] = s
	return s
}

// lookupCurrent is the read-locked fast path of add: s is already in the
// current generation.
func (in *regionInterner) lookupCurrent(tenant engine.Tenant, s string) (string, bool) {
	in.mu.RLock()
	defer in.mu.RUnlock()
	if t := in.tenants[tenant]; t != nil {
		v, ok := t.cur[s]
		return v, ok
	}
	return "", false
}
