package refstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// CheckInvariants verifies that every index agrees with the primary maps,
// every pool is within its ceiling and nothing past its deadline remains
// (after the cleanup any operation would run first).
func (s *Store) CheckInvariants() error {
	s.gate.Lock()
	defer s.gate.Unlock()
	now := s.cleanNow()
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(s.leases) != len(s.listings) || len(s.presenceHandles) != len(s.listings) {
		bad("index sizes: listings %d leases %d presence handles %d", len(s.listings), len(s.leases), len(s.presenceHandles))
	}
	owned := map[string]int{}
	for id, l := range s.listings {
		if l.id != id || s.leases[l.lease] != id || s.presenceHandles[l.presence] != id {
			bad("listing %v not indexed by its lease and presence handle", id)
		}
		if l.leaseDeadline <= now {
			bad("listing %v past its lease deadline", id)
		}
		owned[string(l.owner)]++
	}
	for h, p := range s.presence {
		if _, ok := s.presenceHandles[h]; !ok {
			bad("presence %v without a listing", h)
		}
		if p.deadline <= now {
			bad("presence %v past its deadline", h)
		}
	}
	if len(s.attemptHandles) != len(s.attempts) {
		bad("index sizes: attempts %d handles %d", len(s.attempts), len(s.attemptHandles))
	}
	for id, a := range s.attempts {
		if s.attemptHandles[a.handle] != id || a.id != id {
			bad("attempt %v not indexed by its handle", id)
		}
		if l, ok := s.listings[a.listing]; !ok || l.tenant != a.tenant {
			bad("attempt %v outlives its listing", id)
		}
		if a.deadline <= now {
			bad("attempt %v past its deadline", id)
		}
		if a.consumed && (!a.host.Bound() || !a.peer.Bound()) {
			bad("attempt %v consumed without both endpoints", id)
		}
	}
	for k, e := range s.idempotency {
		if l, ok := s.listings[e.listing]; ok && e.deadline-l.leaseDeadline != s.lim.IdempotencyTTL-s.lim.LeaseTTL {
			bad("idempotency %q does not outlive its listing by %v", k, s.lim.IdempotencyTTL-s.lim.LeaseTTL)
		}
		if e.deadline <= now {
			bad("idempotency %q past its deadline", k)
		}
	}
	for k, d := range s.replay {
		if d <= now {
			bad("replay %q past its deadline", k)
		}
	}
	for k, d := range s.revocations {
		if d <= now {
			bad("revocation %q past its deadline", k)
		}
	}
	for k, d := range s.tenantRevocations {
		if d <= now {
			bad("tenant revocation %v past its deadline", k)
		}
	}
	for _, c := range []struct {
		name   string
		n, max int
	}{
		{"listings", len(s.listings), s.lim.MaxListings}, {"presence", len(s.presence), s.lim.MaxPresence},
		{"attempts", len(s.attempts), s.lim.MaxAttempts}, {"replay", len(s.replay), s.lim.MaxReplay},
		{"revocations", s.nRevocations(), s.lim.MaxRevocations}, {"idempotency", len(s.idempotency), s.lim.MaxIdempotency},
	} {
		if c.n > c.max {
			bad("pool %s holds %d over its ceiling %d", c.name, c.n, c.max)
		}
	}
	for o, n := range owned {
		if n > s.lim.OwnerListingQuota {
			bad("owner %q holds %d listings over the quota", o, n)
		}
	}
	s.checkQuotas(bad)
	return errors.Join(errs...)
}

// Snapshot renders the whole state (after cleanup) in sorted order, without
// fingerprints.
func (s *Store) Snapshot() string {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.cleanNow()
	var lines []string
	for _, l := range s.listings {
		line := fmt.Sprintf("listing %v lease=%v presence=%v tenant=%v owner=%q version=%d players=%d deadline=%v seq=%d spec=%x doc=%q",
			l.id, l.lease, l.presence, l.tenant, l.owner, l.version, l.players, l.leaseDeadline, l.lastSeq, l.spec.Hash(), l.doc)
		if p, ok := s.presence[l.presence]; ok {
			line += fmt.Sprintf(" fresh=%v/%v until %v", p.public, p.local, p.deadline)
		}
		lines = append(lines, line)
	}
	for _, a := range s.attempts {
		lines = append(lines, fmt.Sprintf("attempt %v handle=%v listing=%v tenant=%v client=%q deadline=%v host=%v peer=%v consumed=%v",
			a.id, a.handle, a.listing, a.tenant, a.client, a.deadline, a.host, a.peer, a.consumed))
	}
	for k, e := range s.idempotency {
		lines = append(lines, fmt.Sprintf("idempotency %q request=%s listing=%v attempt=%v deadline=%v", k, requestHex(e.request), e.listing, e.attempt, e.deadline))
	}
	for k, d := range s.replay {
		lines = append(lines, fmt.Sprintf("replay %q deadline=%v", k, d))
	}
	for k, d := range s.revocations {
		lines = append(lines, fmt.Sprintf("revocation %q deadline=%v", k, d))
	}
	for k, d := range s.tenantRevocations {
		lines = append(lines, fmt.Sprintf("tenant revocation %v/%v %q deadline=%v", k.tenant.Game, k.tenant.Env, k.subject, d))
	}
	slices.Sort(lines)
	head := fmt.Sprintf("instance=%v available=%v draining=%v deadline=%v\n", s.id, s.available, s.draining, s.drainDeadline)
	return head + strings.Join(lines, "\n")
}

// checkQuotas counts every tenant's and client's holdings by scanning and
// reports any over its quota.
func (s *Store) checkQuotas(bad func(string, ...any)) {
	listings, attempts, idem := map[engine.Tenant]int{}, map[engine.Tenant]int{}, map[engine.Tenant]int{}
	clients := map[engine.Subject]int{}
	for _, l := range s.listings {
		listings[l.tenant]++
	}
	for _, a := range s.attempts {
		attempts[a.tenant]++
		clients[a.client]++
	}
	for _, e := range s.idempotency {
		idem[e.tenant]++
	}
	for _, c := range []struct {
		name  string
		n     map[engine.Tenant]int
		quota int
	}{
		{"listings", listings, s.lim.TenantListingQuota},
		{"attempts", attempts, s.lim.TenantAttemptQuota},
		{"idempotency records", idem, s.lim.TenantIdempotencyQuota},
	} {
		for t, n := range c.n {
			if n > c.quota {
				bad("tenant %v holds %d %s over the quota", t, n, c.name)
			}
		}
	}
	for c, n := range clients {
		if n > s.lim.SubjectAttemptQuota {
			bad("client %q holds %d attempts over the quota", c, n)
		}
	}
}
