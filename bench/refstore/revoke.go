package refstore

import (
	"context"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func (s *Store) ConsumeReplay(ctx context.Context, cmd engine.ConsumeReplay) (engine.Result, error) {
	life, err := validateReplay(&cmd, s.lim.ReplayTTL)
	if err != nil {
		return engine.Result{}, err
	}
	return s.transition(ctx, func(now time.Duration) engine.Result {
		key := strconv.Itoa(len(cmd.Namespace)) + ":" + cmd.Namespace + ":" + cmd.Key
		if _, ok := s.replay[key]; ok {
			return engine.Result{Outcome: engine.ReplayRejected}
		}
		if len(s.replay) >= s.lim.MaxReplay {
			return engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolReplay}
		}
		s.replay[key] = now + life
		return engine.Result{}
	})
}

func (s *Store) RevokeListing(ctx context.Context, cmd engine.RevokeListing) (engine.Result, error) {
	if !cmd.AnyTenant {
		if err := cmd.Tenant.Validate(); err != nil {
			return engine.Result{}, err
		}
	}
	return s.transition(ctx, func(time.Duration) engine.Result {
		l, ok := s.listings[cmd.Listing]
		if !ok || (!cmd.AnyTenant && l.tenant != cmd.Tenant) {
			return engine.Result{Outcome: engine.NotFound}
		}
		s.removeListing(l.id)
		return engine.Result{}
	})
}

// RevokePrincipal scans every listing and every attempt for the subject.
func (s *Store) RevokePrincipal(ctx context.Context, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	return s.revoke(ctx, nil, subject, ttl)
}

// revoke inserts a revocation of subject, global (tenant nil) or confined
// to *tenant, then scans every listing and attempt for the subject's
// records there and removes them.
func (s *Store) revoke(ctx context.Context, tenant *engine.Tenant, subject engine.Subject, ttl time.Duration) (int, engine.Result, error) {
	if tenant != nil {
		if err := tenant.Validate(); err != nil {
			return 0, engine.Result{}, err
		}
	}
	if err := subject.Validate(); err != nil {
		return 0, engine.Result{}, err
	}
	if ttl < time.Second || ttl > engine.MaxRevocationTTL {
		return 0, engine.Result{}, inputErr("ttl_s", "must be 1..600 seconds")
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return 0, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return 0, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	var exists bool
	if tenant == nil {
		_, exists = s.revocations[subject]
	} else {
		_, exists = s.tenantRevocations[tenantSubject{*tenant, subject}]
	}
	if !exists && s.nRevocations() >= s.lim.MaxRevocations {
		return 0, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolRevocations}, nil
	}
	if tenant == nil {
		s.revocations[subject] = now + ttl
	} else {
		s.tenantRevocations[tenantSubject{*tenant, subject}] = now + ttl
	}
	in := func(t engine.Tenant) bool { return tenant == nil || t == *tenant }
	var listings []engine.ListingID
	for id, l := range s.listings {
		if l.owner == subject && in(l.tenant) {
			listings = append(listings, id)
		}
	}
	var attempts []engine.AttemptID
	for id, a := range s.attempts {
		if a.client == subject && in(a.tenant) {
			attempts = append(attempts, id)
		}
	}
	for _, id := range listings {
		s.removeListing(id)
	}
	for _, id := range attempts {
		s.removeAttempt(id)
	}
	return len(listings) + len(attempts), engine.Result{}, nil
}

func (s *Store) Revoked(ctx context.Context, subject engine.Subject) (bool, error) {
	return s.revokedIn(ctx, nil, subject)
}

// revokedIn tells whether subject is revoked everywhere or, with a tenant,
// in that tenant.
func (s *Store) revokedIn(ctx context.Context, tenant *engine.Tenant, subject engine.Subject) (bool, error) {
	if err := subject.Validate(); err != nil {
		return false, err
	}
	if _, err := s.atomic(ctx); err != nil {
		return false, err
	}
	defer s.gate.Unlock()
	if _, global := s.revocations[subject]; global || tenant == nil {
		return global, nil
	}
	_, inTenant := s.tenantRevocations[tenantSubject{*tenant, subject}]
	return inTenant, nil
}
