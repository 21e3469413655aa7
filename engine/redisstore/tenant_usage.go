package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// TenantUsage reports t's usage after cleanup; zero usage for an invalid
// tenant or when Redis does not answer.
func (s *Store) TenantUsage(t engine.Tenant) engine.TenantUsage {
	u := s.lim.TenantQuotas()
	if t.Validate() != nil {
		return u
	}
	m, ok, _ := s.call(context.Background(), "rdv_tenant_usage", tenantArg(t))
	a, err := m.ToArray()
	if !ok || err != nil || len(a) != 3 {
		return u
	}
	n := ints(a)
	u.Listings.Used, u.Attempts.Used, u.Idempotency.Used = int(n[0]), int(n[1]), int(n[2])
	return u
}
