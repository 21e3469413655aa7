package redisstore

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// revocationSet is an instance's copy of the live revocations, kept in
// step with its browse index by the same calls: a revocation's insertion
// or re-timing is an entry of the browse change log
// (scripts/prelude/76_revocation_sync.lua), and a rebuild reads them all
// (rdv_browse_revocations). So the request that makes a page's call, or
// shares one made after it began, checks its caller against what Redis
// held at that call's instant, without a call of its own: a revocation
// acknowledged anywhere is honoured by the next request on every instance,
// as when each request asked Redis (rdv_revoked).
//
// Expiry is not logged: an entry counts while its deadline is after the
// time of the call the copy is at (browseMirror.now). Entries past it are
// dropped once the set holds more than the revocation pool's ceiling, so
// the set stays within it: the entries it keeps are live at that time, and
// Redis refuses a revocation beyond the ceiling. Not safe for concurrent
// use (browseMirror.mu guards it).
type revocationSet struct {
	dl  map[string]int64 // member ("g\x00<subject>", "t\x00<tenant>\x00<subject>") → deadline, ticks
	max int
}

func newRevocationSet(max int) *revocationSet {
	return &revocationSet{dl: make(map[string]int64), max: max}
}

// revocationMember reports whether item f (of rdv_browse_sync) is a
// revocation's: its first element is a member, whose second byte is a NUL
// (a listing ID's is a hex digit).
func revocationMember(f []rueidis.RedisMessage) (string, bool) {
	if len(f) == 0 {
		return "", false
	}
	m := str(f[0])
	return m, len(m) > 2 && m[1] == 0
}

// apply applies revocation item {member, deadline} ('0': gone), now being
// the time of the call that answered it; false for an item it cannot read.
func (r *revocationSet) apply(f []rueidis.RedisMessage, now int64) bool {
	m, ok := revocationMember(f)
	if !ok || len(f) != 2 {
		return false
	}
	d, err := strconv.ParseFloat(str(f[1]), 64)
	if err != nil {
		return false
	}
	if int64(d) <= now {
		delete(r.dl, m)
		return true
	}
	r.dl[m] = int64(d)
	if len(r.dl) > r.max {
		r.prune(now)
	}
	return true
}

// prune drops the entries past their deadline at now.
func (r *revocationSet) prune(now int64) {
	for m, d := range r.dl {
		if d <= now {
			delete(r.dl, m)
		}
	}
}

// revoked reports whether subject has a revocation live at now: a global
// one or, t not nil, one confined to *t. It does not allocate.
func (r *revocationSet) revoked(t *engine.Tenant, subject engine.Subject, now int64) bool {
	if r == nil || len(r.dl) == 0 {
		return false
	}
	var buf [400]byte // a subject is at most 256 bytes, a tenant's parts 64 each
	k := append(append(buf[:0], 'g', 0), subject...)
	if d, ok := r.dl[string(k)]; ok && d > now {
		return true
	}
	if t == nil {
		return false
	}
	k = append(append(append(append(buf[:0], 't', 0), t.Game...), '/'), t.Env...)
	k = append(append(k, 0), subject...)
	d, ok := r.dl[string(k)]
	return ok && d > now
}

// applySyncItem applies one item of rdv_browse_sync, a listing's (to idx)
// or a revocation's (to rev), now being the call's time.
func applySyncItem(idx *browseIndex, rev *revocationSet, it rueidis.RedisMessage, now int64) bool {
	if f, err := it.ToArray(); err == nil {
		if _, ok := revocationMember(f); ok {
			return rev.apply(f, now)
		}
	}
	return idx.apply(it)
}

// loadRevocations reads every live revocation into rev
// (rdv_browse_revocations), for a rebuild of generation gen.
func (s *Store) loadRevocations(ctx context.Context, rev *revocationSet, gen string) (ok bool, r engine.Result, err error) {
	h, items, r, err := s.browseCall(ctx, "rdv_browse_revocations")
	if err != nil || r.Outcome != engine.Success || h.gen != gen {
		return false, r, err
	}
	for _, it := range items {
		f, err := it.ToArray()
		if err != nil || !rev.apply(f, h.now) {
			return false, unreachable, nil
		}
	}
	return true, r, nil
}

// revoked answers Revoked and RevokedInTenant (t nil: global only). On an
// instance that keeps a browse index (it has served a page), from its copy
// of the revocations, brought to what Redis holds by a call shared with the
// pages and checks in flight (browseFresh). Before, and when that call is
// refused (the deployment marked unavailable, a server refusing writes), by
// a call of its own (rdv_revoked, a read every server answers): an instance
// that serves no page builds no index, and a refusal costs no rebuild.
func (s *Store) revoked(ctx context.Context, t *engine.Tenant, subject engine.Subject) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m := &s.mirror
	m.mu.RLock()
	ready := m.ready
	m.mu.RUnlock()
	if ready {
		r, err := s.browseFresh(ctx)
		if err == nil && r.Outcome == engine.Success {
			m.mu.RLock()
			rev := m.rev.revoked(t, subject, m.now)
			m.mu.RUnlock()
			return rev, nil
		}
		if err != nil {
			return false, err
		}
	}
	tenant := ""
	if t != nil {
		tenant = tenantArg(*t)
	}
	rm, ok, err := s.call(ctx, "rdv_revoked", tenant, string(subject))
	if err != nil {
		return false, err
	}
	if !ok {
		return false, ErrUnavailable
	}
	return num(rm) == 1, nil
}

// revokedResult is revoked as an outcome: Revoked, NotFound when subject
// is not revoked, ServiceUnavailable when that cannot be told.
func (s *Store) revokedResult(ctx context.Context, tenant engine.Tenant, subject engine.Subject) engine.Result {
	rev, err := s.revoked(ctx, &tenant, subject)
	switch {
	case err != nil:
		return unreachable
	case rev:
		return engine.Result{Outcome: engine.Revoked}
	}
	return engine.Result{Outcome: engine.NotFound}
}
