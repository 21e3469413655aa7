package engine

import (
	"fmt"
	"time"
)

// Default ceilings and lifetimes (docs/contracts/semantics.md#ceilings,
// docs/contracts/semantics.md#lifetimes). Each ceiling is independent:
// exhausting one never evicts from another.
const (
	DefaultMaxListings    = 25_000
	DefaultMaxPresence    = 25_000
	DefaultMaxAttempts    = 10_000
	DefaultMaxReplay      = 30_000
	DefaultMaxRevocations = 10_000
	DefaultMaxIdempotency = 35_000

	DefaultLeaseTTL       = 60 * time.Second
	DefaultPresenceTTL    = 20 * time.Second
	DefaultAttemptTTL     = 30 * time.Second
	DefaultReplayTTL      = 30 * time.Second
	DefaultIdempotencyTTL = 2 * time.Minute
	DefaultDrainWindow    = 30 * time.Second

	MaxLeaseTTL       = 60 * time.Second
	MaxPresenceTTL    = 20 * time.Second
	MaxAttemptTTL     = 30 * time.Second
	MaxReplayTTL      = 30 * time.Second
	MaxIdempotencyTTL = 10 * time.Minute
	MaxDrainWindow    = 30 * time.Second
	MaxRevocationTTL  = 600 * time.Second

	// DefaultOwnerListingQuota is the listings one owner may hold (at most
	// max-listings); the other quotas default to shares of their pools
	// (Limits.DefaultShares).
	DefaultOwnerListingQuota = 100

	// BrowsePageMax is the most items one browse returns.
	BrowsePageMax = 100
	// PendingOffersMax is the most pending attempts a presence answer names.
	PendingOffersMax = 4
)

// Limits configures a store. The zero value is not valid; start from DefaultLimits.
type Limits struct {
	MaxListings, MaxPresence, MaxAttempts        int
	MaxReplay, MaxRevocations, MaxIdempotency    int
	LeaseTTL, PresenceTTL, AttemptTTL, ReplayTTL time.Duration
	IdempotencyTTL, DrainWindow                  time.Duration
	OwnerListingQuota, TenantAttemptQuota        int
	// SubjectAttemptQuota bounds one principal's live attempts,
	// TenantListingQuota a tenant's live listings, TenantIdempotencyQuota
	// a tenant's idempotency records and SubjectIdempotencyQuota one
	// principal's. Every quota is at most its pool.
	SubjectAttemptQuota, TenantListingQuota, TenantIdempotencyQuota int
	SubjectIdempotencyQuota                                         int
}

// DefaultLimits is the default pools and lifetimes
// (docs/contracts/semantics.md#ceilings, docs/contracts/semantics.md#lifetimes)
// with the default shares of those pools as quotas.
func DefaultLimits() Limits {
	return Limits{
		MaxListings: DefaultMaxListings, MaxPresence: DefaultMaxPresence, MaxAttempts: DefaultMaxAttempts,
		MaxReplay: DefaultMaxReplay, MaxRevocations: DefaultMaxRevocations, MaxIdempotency: DefaultMaxIdempotency,
		LeaseTTL: DefaultLeaseTTL, PresenceTTL: DefaultPresenceTTL, AttemptTTL: DefaultAttemptTTL,
		ReplayTTL: DefaultReplayTTL, IdempotencyTTL: DefaultIdempotencyTTL, DrainWindow: DefaultDrainWindow,
	}.DefaultShares()
}

// DefaultShares returns l with every policy quota at its default share of
// l's pools: a tenant may hold half of the listing, attempt and idempotency
// pools (and, while other tenants hold some of a pool, only less than the
// pool has free: FairShare); one principal a
// tenth of the attempt pool, so one client cannot fill even its own
// tenant's share, and a tenth of the idempotency pool, so one client's
// churn of creations (each keeps its record for the idempotency lifetime)
// cannot use up its tenant's share; one owner DefaultOwnerListingQuota
// listings (at most the pool). With the default pools: 12,500 listings,
// 5,000 attempts and 17,500 idempotency records per tenant, 1,000 attempts
// and 3,500 idempotency records per subject, 100 listings per owner.
func (l Limits) DefaultShares() Limits {
	l.OwnerListingQuota = min(DefaultOwnerListingQuota, l.MaxListings)
	l.TenantListingQuota = max(1, l.MaxListings/2)
	l.TenantAttemptQuota = max(1, l.MaxAttempts/2)
	l.SubjectAttemptQuota = max(1, l.MaxAttempts/10)
	l.TenantIdempotencyQuota = max(1, l.MaxIdempotency/2)
	l.SubjectIdempotencyQuota = max(1, l.MaxIdempotency/10)
	return l
}

// ConfigError names the setting that is out of range.
type ConfigError struct {
	Setting string
	Reason  string
}

func (e *ConfigError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Setting, e.Reason) }

// Validate reports the first setting out of range. Setting names are the
// server's flag names (max-listings, lease-ttl, ...).
func (l Limits) Validate() error {
	counts := []struct {
		name string
		v    int
	}{
		{"max-listings", l.MaxListings}, {"max-presence", l.MaxPresence}, {"max-attempts", l.MaxAttempts},
		{"max-replay", l.MaxReplay}, {"max-revocations", l.MaxRevocations}, {"max-idempotency", l.MaxIdempotency},
		{"owner-listing-quota", l.OwnerListingQuota}, {"tenant-attempt-quota", l.TenantAttemptQuota},
		{"subject-attempt-quota", l.SubjectAttemptQuota}, {"tenant-listing-quota", l.TenantListingQuota},
		{"tenant-idempotency-quota", l.TenantIdempotencyQuota},
		{"subject-idempotency-quota", l.SubjectIdempotencyQuota},
	}
	for _, c := range counts {
		if c.v <= 0 || c.v > 1<<24 {
			return &ConfigError{c.name, fmt.Sprintf("%d is not in 1..%d", c.v, 1<<24)}
		}
	}
	durations := []struct {
		name   string
		v, max time.Duration
	}{
		{"lease-ttl", l.LeaseTTL, MaxLeaseTTL}, {"presence-ttl", l.PresenceTTL, MaxPresenceTTL},
		{"attempt-ttl", l.AttemptTTL, MaxAttemptTTL}, {"replay-ttl", l.ReplayTTL, MaxReplayTTL},
		{"idempotency-ttl", l.IdempotencyTTL, MaxIdempotencyTTL}, {"drain-window", l.DrainWindow, MaxDrainWindow},
	}
	for _, d := range durations {
		if d.v < time.Second || d.v > d.max {
			return &ConfigError{d.name, fmt.Sprintf("%v is not in 1s..%v", d.v, d.max)}
		}
	}
	// A live duplicate must never outlive its idempotency record
	// (docs/contracts/semantics.md#idempotent-creation).
	if l.IdempotencyTTL < l.LeaseTTL || l.IdempotencyTTL < l.AttemptTTL {
		return &ConfigError{"idempotency-ttl", "must be at least lease-ttl and attempt-ttl"}
	}
	// A quota is a share of its pool; one above the pool could never bind.
	quotas := []struct {
		name, pool string
		v, max     int
	}{
		{"owner-listing-quota", "max-listings", l.OwnerListingQuota, l.MaxListings},
		{"tenant-listing-quota", "max-listings", l.TenantListingQuota, l.MaxListings},
		{"tenant-attempt-quota", "max-attempts", l.TenantAttemptQuota, l.MaxAttempts},
		{"subject-attempt-quota", "max-attempts", l.SubjectAttemptQuota, l.MaxAttempts},
		{"tenant-idempotency-quota", "max-idempotency", l.TenantIdempotencyQuota, l.MaxIdempotency},
		{"subject-idempotency-quota", "max-idempotency", l.SubjectIdempotencyQuota, l.MaxIdempotency},
	}
	for _, q := range quotas {
		if q.v > q.max {
			return &ConfigError{q.name, fmt.Sprintf("%d is above %s (%d): a quota is a share of its pool", q.v, q.pool, q.max)}
		}
	}
	return nil
}

// WholePools returns l with every policy quota equal to its pool, so one
// tenant or principal may fill a whole pool: for ceiling proofs and tests
// that fill a pool from one principal, never the service's defaults.
func (l Limits) WholePools() Limits {
	l.OwnerListingQuota, l.TenantListingQuota = l.MaxListings, l.MaxListings
	l.TenantAttemptQuota, l.SubjectAttemptQuota = l.MaxAttempts, l.MaxAttempts
	l.TenantIdempotencyQuota, l.SubjectIdempotencyQuota = l.MaxIdempotency, l.MaxIdempotency
	return l
}
