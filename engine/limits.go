package engine

import (
	"fmt"
	"time"
)

// Default ceilings and lifetimes (CONTRACT.md §1). Each ceiling is
// independent: exhausting one never evicts from another.
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

	DefaultOwnerListingQuota  = 100
	DefaultTenantAttemptQuota = 10_000

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
}

func DefaultLimits() Limits {
	return Limits{
		MaxListings: DefaultMaxListings, MaxPresence: DefaultMaxPresence, MaxAttempts: DefaultMaxAttempts,
		MaxReplay: DefaultMaxReplay, MaxRevocations: DefaultMaxRevocations, MaxIdempotency: DefaultMaxIdempotency,
		LeaseTTL: DefaultLeaseTTL, PresenceTTL: DefaultPresenceTTL, AttemptTTL: DefaultAttemptTTL,
		ReplayTTL: DefaultReplayTTL, IdempotencyTTL: DefaultIdempotencyTTL, DrainWindow: DefaultDrainWindow,
		OwnerListingQuota: DefaultOwnerListingQuota, TenantAttemptQuota: DefaultTenantAttemptQuota,
	}
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
	// A live duplicate must never outlive its idempotency record (ADR 0004).
	if l.IdempotencyTTL < l.LeaseTTL || l.IdempotencyTTL < l.AttemptTTL {
		return &ConfigError{"idempotency-ttl", "must be at least lease-ttl and attempt-ttl"}
	}
	return nil
}
