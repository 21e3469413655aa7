package engine

import (
	"errors"
	"testing"
)

// The default quotas keep every tenant and subject below the whole pool, so
// another tenant always finds room.
func TestDefaultQuotasAreSharesOfThePools(t *testing.T) {
	l := DefaultLimits()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name        string
		quota, pool int
	}{
		{"tenant-listing-quota", l.TenantListingQuota, l.MaxListings},
		{"tenant-attempt-quota", l.TenantAttemptQuota, l.MaxAttempts},
		{"subject-attempt-quota", l.SubjectAttemptQuota, l.MaxAttempts},
		{"tenant-idempotency-quota", l.TenantIdempotencyQuota, l.MaxIdempotency},
		{"subject-idempotency-quota", l.SubjectIdempotencyQuota, l.MaxIdempotency},
		{"owner-listing-quota", l.OwnerListingQuota, l.MaxListings},
	} {
		if q.quota < 1 || q.quota > q.pool/2 {
			t.Errorf("%s default %d is not at most half of its pool %d", q.name, q.quota, q.pool)
		}
	}
	if l.TenantListingQuota != 12_500 || l.TenantAttemptQuota != 5_000 || l.SubjectAttemptQuota != 1_000 ||
		l.TenantIdempotencyQuota != 17_500 || l.SubjectIdempotencyQuota != 3_500 || l.OwnerListingQuota != 100 {
		t.Errorf("default quotas changed: %+v (update docs/operations.md)", l)
	}
	// Shares follow the pools, down to pools of one.
	for _, n := range []int{1, 2, 3, 7, 50} {
		d := DefaultLimits()
		d.MaxListings, d.MaxAttempts, d.MaxIdempotency = n, n, n
		if err := d.DefaultShares().Validate(); err != nil {
			t.Errorf("shares of pools of %d: %v", n, err)
		}
	}
}

// A quota above its pool is rejected, naming the quota; equal is allowed
// (one principal may be allowed a whole pool on purpose).
func TestValidateRejectsQuotaAbovePool(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Limits, int)
		pool func(*Limits) int
	}{
		{"owner-listing-quota", func(l *Limits, v int) { l.OwnerListingQuota = v }, func(l *Limits) int { return l.MaxListings }},
		{"tenant-listing-quota", func(l *Limits, v int) { l.TenantListingQuota = v }, func(l *Limits) int { return l.MaxListings }},
		{"tenant-attempt-quota", func(l *Limits, v int) { l.TenantAttemptQuota = v }, func(l *Limits) int { return l.MaxAttempts }},
		{"subject-attempt-quota", func(l *Limits, v int) { l.SubjectAttemptQuota = v }, func(l *Limits) int { return l.MaxAttempts }},
		{"tenant-idempotency-quota", func(l *Limits, v int) { l.TenantIdempotencyQuota = v }, func(l *Limits) int { return l.MaxIdempotency }},
		{"subject-idempotency-quota", func(l *Limits, v int) { l.SubjectIdempotencyQuota = v }, func(l *Limits) int { return l.MaxIdempotency }},
	} {
		l := DefaultLimits()
		c.set(&l, c.pool(&l))
		if err := l.Validate(); err != nil {
			t.Errorf("%s equal to its pool: %v", c.name, err)
		}
		c.set(&l, c.pool(&l)+1)
		var ce *ConfigError
		if err := l.Validate(); !errors.As(err, &ce) || ce.Setting != c.name {
			t.Errorf("%s above its pool: error %v, want one naming it", c.name, err)
		}
		if l.WholePools().Validate() != nil {
			t.Errorf("WholePools is not valid")
		}
	}
}
