package memstore

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// CreateJoinAttempt authorises one client to be introduced to one listing's
// host. Order: input -> ServiceUnavailable -> Draining -> Revoked(client) ->
// idempotency -> NotFound (listing missing, other tenant, protocol mismatch,
// presence not fresh) -> Full (current_players >= max_players) -> global
// pools (attempts, idempotency) -> quotas (subject attempts, subject
// idempotency records, tenant attempts, tenant idempotency records).
func (s *Store) CreateJoinAttempt(ctx context.Context, cmd engine.CreateAttempt) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateCreateAttempt(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	fp := attemptFingerprint(cmd.Listing, cmd.ProtocolVersion, cmd.RelayOnly)
	return s.join(ctx, idemAttempt, &cmd, fp, func() int32 {
		li := s.tenantListing(cmd.Tenant, cmd.Listing)
		if li < 0 || s.listings.at(li).proto != cmd.ProtocolVersion || !s.listings.at(li).fresh {
			return -1
		}
		return li
	})
}

// join is a join or quick join j (validated; its idempotency namespace
// kind and request fingerprint fp): the caller-chosen keys are hashed and
// the attempt drafted outside the commit lock; under it, admission, a
// replay, then pick chooses the listing slot (-1: NotFound) and
// joinListing does the rest.
func (s *Store) join(ctx context.Context, kind idemKind, j *engine.CreateAttempt, fp [32]byte, pick func() int32) (engine.AttemptView, engine.Result, error) {
	client, rev := s.subjectKey(j.Client), s.tenantRevKey(j.Tenant, j.Client)
	ik := s.idemKey(kind, j.Tenant, j.Client, j.IdempotencyKey)
	var draft attemptDraft
	s.draftAttempt(&draft)
	now, err := s.begin(ctx)
	if err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	defer s.end()
	if r, stop := s.admitNewWork(client, &rev); stop {
		return engine.AttemptView{}, r, nil
	}
	if v, r, found := s.replayAttempt(&ik, &fp, now); found {
		return v, r, nil
	}
	li := pick()
	if li < 0 {
		return engine.AttemptView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	return s.joinListing(li, &draft, client, &ik, &fp, j.RelayOnly, now)
}

// replayAttempt answers a join or quick join whose idempotency record
// exists (found): Conflict for another request, the attempt first created,
// or Expired once it is gone.
func (s *Store) replayAttempt(ik *idemKey, fp *[32]byte, now time.Duration) (v engine.AttemptView, r engine.Result, found bool) {
	ii := s.findIdem(ik)
	if ii < 0 {
		return v, r, false
	}
	rec := s.idem.at(ii)
	if rec.fp != *fp {
		return v, engine.Result{Outcome: engine.Conflict}, true
	}
	if ai, ok := s.attemptByID.get(rec.res); ok {
		return s.attemptView(ai, now), engine.Result{Replay: true}, true
	}
	return v, engine.Result{Outcome: engine.Expired}, true
}

// joinListing is the rest of a join to listing slot li, found, of the
// join's tenant and protocol, with fresh presence: Full, then the pools
// and quotas, then the attempt and its idempotency record.
func (s *Store) joinListing(li int32, draft *attemptDraft, client subjectKey, ik *idemKey, fp *[32]byte, relayOnly bool, now time.Duration) (engine.AttemptView, engine.Result, error) {
	if l := s.listings.at(li); l.players >= l.maxPlayers {
		return engine.AttemptView{}, engine.Result{Outcome: engine.Full}, nil
	}
	if s.attempts.n >= s.lim.MaxAttempts {
		return engine.AttemptView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolAttempts}, nil
	}
	if s.idem.n >= s.lim.MaxIdempotency {
		return engine.AttemptView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolIdempotency}, nil
	}
	if q := s.attemptQuota(client, s.listings.at(li).tenant); q != engine.PoolNone {
		return engine.AttemptView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: q}, nil
	}
	ai := s.insertAttempt(draft, li, client, now)
	s.attempts.at(ai).relayOnly = relayOnly || s.docs[li].spec.RelayOnlyJoins
	a := s.attempts.at(ai)
	s.addIdem(ik, a.tenant, a.client, *fp, a.id.UUID, now+s.lim.IdempotencyTTL)
	return s.attemptView(ai, now), engine.Result{}, nil
}

// attemptDraft is what a new attempt needs that can be made before the
// commit lock is taken: fresh IDs and the client's fingerprint. (The host's
// fingerprint depends on the listing, read under the lock.)
type attemptDraft struct {
	id        engine.AttemptID
	handle    engine.Handle
	clientKey engine.Fingerprint
}

func (s *Store) draftAttempt(d *attemptDraft) {
	d.id, d.handle = engine.AttemptID{UUID: engine.NewUUID()}, engine.Handle{UUID: engine.NewUUID()}
	c := s.keys.AttemptClient(d.handle)
	d.clientKey = engine.FingerprintOf(&c)
}

// insertAttempt creates an attempt on listing slot li and links it into
// every index and list. The caller holds the commit lock and has checked
// every pool and quota.
func (s *Store) insertAttempt(d *attemptDraft, li int32, client subjectKey, now time.Duration) int32 {
	for s.uuidTaken(d.id.UUID) || s.uuidTaken(d.handle.UUID) || d.id.UUID == d.handle.UUID {
		s.draftAttempt(d) // astronomically unlikely
	}
	l := s.listings.at(li)
	presCap := s.keys.Presence(l.presence)
	hostCap := engine.HostAttemptCapability(&presCap, d.handle)
	tenant := l.tenant
	s.tenants.at(tenant).counts.attempts++
	ci := s.subjectSlot(client)
	ai := s.attempts.alloc()
	*s.attempts.at(ai) = attemptRec{
		id: d.id, handle: d.handle, listing: li, tenant: tenant, client: ci,
		clientKey: d.clientKey, hostKey: engine.FingerprintOf(&hostCap),
	}
	l = s.listings.at(li)
	s.byListing.pushBack(&l.attempts, ai)
	s.pending.pushBack(&l.pending, ai)
	s.byClnt.pushBack(&s.subjects.at(ci).attempts, ai)
	s.attemptExp.push(ai, now+s.lim.AttemptTTL)
	s.attemptByID.put(d.id.UUID, ai)
	s.attemptByHandle.put(d.handle.UUID, ai)
	s.inFlight++
	return ai
}
