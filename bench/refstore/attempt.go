package refstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// BindHostPresence replaces the whole endpoint; the pending list scans
// every attempt and sorts the host-unbound ones of this listing.
func (s *Store) BindHostPresence(ctx context.Context, cmd engine.BindPresence) (engine.PresenceView, engine.Result, error) {
	if err := validatePresence(&cmd); err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	pv, r := s.bindPresence(&cmd, now)
	return pv, r, nil
}

func (s *Store) bindPresence(cmd *engine.BindPresence, now time.Duration) (engine.PresenceView, engine.Result) {
	if !s.available {
		return engine.PresenceView{}, engine.Result{Outcome: engine.ServiceUnavailable}
	}
	id, ok := s.presenceHandles[cmd.Handle]
	l := s.listings[id]
	if !ok || l == nil || l.presenceKey != cmd.Key {
		return engine.PresenceView{}, engine.Result{Outcome: engine.NotFound}
	}
	if cmd.Seq <= l.lastSeq {
		return engine.PresenceView{}, engine.Result{Outcome: engine.Conflict}
	}
	if _, fresh := s.presence[cmd.Handle]; !fresh && len(s.presence) >= s.lim.MaxPresence {
		return engine.PresenceView{}, engine.Result{Outcome: engine.CapacityExceeded, Pool: engine.PoolPresence}
	}
	l.lastSeq = cmd.Seq
	s.presence[cmd.Handle] = &presenceEntry{public: cmd.Public, local: cmd.Local, deadline: now + s.lim.PresenceTTL}
	pv := engine.PresenceView{Listing: l.id, TTL: s.lim.PresenceTTL}
	var pending []*attemptEntry
	for _, a := range s.attempts {
		if a.listing == l.id && !a.host.Bound() {
			pending = append(pending, a)
		}
	}
	slices.SortFunc(pending, func(a, b *attemptEntry) int { return int(a.created - b.created) })
	for _, a := range pending {
		if pv.NPending == engine.PendingOffersMax {
			break
		}
		pv.Pending[pv.NPending] = a.handle
		pv.NPending++
	}
	return pv, engine.Result{}
}

// attemptRequest is the canonical request fingerprint of a join.
func attemptRequest(cmd *engine.CreateAttempt) [32]byte {
	var b [20]byte
	copy(b[:16], cmd.Listing.UUID[:])
	binary.BigEndian.PutUint32(b[16:], cmd.ProtocolVersion)
	return sha256.Sum256(b[:])
}

// CreateJoinAttempt counts the tenant's attempts by scanning every attempt.
func (s *Store) CreateJoinAttempt(ctx context.Context, cmd engine.CreateAttempt) (engine.AttemptView, engine.Result, error) {
	if err := validateAttempt(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	if cmd.RelayOnly {
		return engine.AttemptView{}, engine.Result{}, errNoRelay
	}
	now, err := s.atomic(ctx)
	if err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if r, stop := s.admission(cmd.Tenant, cmd.Client); stop {
		return engine.AttemptView{}, r, nil
	}
	request := attemptRequest(&cmd)
	key := idemKey("attempt", cmd.Tenant, cmd.Client, cmd.IdempotencyKey)
	if prev, ok := s.idempotency[key]; ok {
		if prev.request != request {
			return engine.AttemptView{}, engine.Result{Outcome: engine.Conflict}, nil
		}
		if a, ok := s.attempts[prev.attempt]; ok {
			return s.attemptSnapshot(a), engine.Result{Replay: true}, nil
		}
		return engine.AttemptView{}, engine.Result{Outcome: engine.Expired}, nil
	}
	l, ok := s.listings[cmd.Listing]
	if !ok || l.tenant != cmd.Tenant || l.spec.ProtocolVersion != cmd.ProtocolVersion {
		return engine.AttemptView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	if _, fresh := s.presence[l.presence]; !fresh {
		return engine.AttemptView{}, engine.Result{Outcome: engine.NotFound}, nil
	}
	inTenant, mine := 0, 0
	for _, a := range s.attempts {
		if a.tenant == cmd.Tenant {
			inTenant++
		}
		if a.client == cmd.Client {
			mine++
		}
	}
	if r := s.admit(creation{tenant: cmd.Tenant, subject: cmd.Client,
		pool: engine.PoolAttempts, subjectQuota: engine.QuotaSubjectAttempts, tenantQuota: engine.QuotaTenantAttempts,
		used: len(s.attempts), max: s.lim.MaxAttempts, mine: mine, mineMax: s.lim.SubjectAttemptQuota,
		inTenant: inTenant, tenantMax: s.lim.TenantAttemptQuota}); !r.OK() {
		return engine.AttemptView{}, r, nil
	}
	s.created++
	a := &attemptEntry{
		id: engine.AttemptID{UUID: engine.NewUUID()}, handle: engine.Handle{UUID: engine.NewUUID()},
		tenant: cmd.Tenant, listing: l.id, client: cmd.Client, protocol: cmd.ProtocolVersion,
		deadline: now + s.lim.AttemptTTL, wallExpiresAt: s.wallDeadline(now, s.lim.AttemptTTL), created: s.created,
	}
	pc := s.keys.Presence(l.presence)
	hc := engine.HostAttemptCapability(&pc, a.handle)
	cc := s.keys.AttemptClient(a.handle)
	a.hostKey, a.clientKey = engine.FingerprintOf(&hc), engine.FingerprintOf(&cc)
	s.attempts[a.id] = a
	s.attemptHandles[a.handle] = a.id
	s.idempotency[key] = &idemEntry{tenant: cmd.Tenant, subject: cmd.Client, request: request, attempt: a.id, deadline: now + s.lim.IdempotencyTTL}
	return s.attemptSnapshot(a), engine.Result{}, nil
}

func (s *Store) BindAttemptEndpoint(ctx context.Context, cmd engine.BindAttempt) (engine.AttemptView, engine.Result, error) {
	if err := validateBind(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	if cmd.Relayed.IsValid() {
		return engine.AttemptView{}, engine.Result{}, errNoRelay
	}
	if _, err := s.atomic(ctx); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	a, r := s.bindAttempt(&cmd)
	if a == nil {
		return engine.AttemptView{}, r, nil
	}
	return s.attemptSnapshot(a), r, nil
}

// bindAttempt returns the attempt for a successful bind, else nil.
func (s *Store) bindAttempt(cmd *engine.BindAttempt) (*attemptEntry, engine.Result) {
	if !s.available {
		return nil, engine.Result{Outcome: engine.ServiceUnavailable}
	}
	id, ok := s.attemptHandles[cmd.Handle]
	a := s.attempts[id]
	if !ok || a == nil {
		return nil, engine.Result{Outcome: engine.NotFound}
	}
	expected, cur := a.clientKey, &a.peer
	if cmd.Role == engine.RoleHost {
		expected, cur = a.hostKey, &a.host
	}
	if expected != cmd.Key {
		return nil, engine.Result{Outcome: engine.NotFound}
	}
	b := engine.Binding{Public: cmd.Public, Local: cmd.Local}
	if cur.Bound() {
		if *cur == b {
			return a, engine.Result{Replay: true}
		}
		return nil, engine.Result{Outcome: engine.ReplayRejected}
	}
	*cur = b
	return a, engine.Result{}
}

func (s *Store) ConsumeIntroduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	return s.introduce(ctx, h, true)
}

func (s *Store) Introduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	return s.introduce(ctx, h, false)
}

// introduce is the introduction of the attempt with handle h: consume takes
// it, once, when both endpoints are bound; otherwise it is read back after it
// was taken.
func (s *Store) introduce(ctx context.Context, h engine.Handle, consume bool) (engine.Introduction, engine.Result, error) {
	if _, err := s.atomic(ctx); err != nil {
		return engine.Introduction{}, engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return engine.Introduction{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	id, ok := s.attemptHandles[h]
	a := s.attempts[id]
	switch {
	case !ok || a == nil:
		return engine.Introduction{}, engine.Result{Outcome: engine.NotFound}, nil
	case consume && a.consumed:
		return engine.Introduction{}, engine.Result{Outcome: engine.ReplayRejected}, nil
	case consume && (!a.host.Bound() || !a.peer.Bound()), !consume && !a.consumed:
		return engine.Introduction{}, engine.Result{Outcome: engine.Conflict}, nil
	}
	a.consumed = true
	return introduction(a), engine.Result{}, nil
}

func introduction(a *attemptEntry) engine.Introduction {
	return engine.Introduction{Attempt: a.id, Handle: a.handle, Host: a.host, Client: a.peer}
}

// AttemptHost runs Cleanup like every reference operation.
func (s *Store) AttemptHost(h engine.Handle) (engine.Handle, bool) {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.cleanup(s.clock.Now())
	id, ok := s.attemptHandles[h]
	a := s.attempts[id]
	if !ok || a == nil || !s.available {
		return engine.Handle{}, false
	}
	return s.listings[a.listing].presence, true
}

func (s *Store) attemptSnapshot(a *attemptEntry) engine.AttemptView {
	v := engine.AttemptView{
		ID: a.id, Handle: a.handle, Listing: a.listing, Tenant: a.tenant, Client: a.client,
		ExpiresAt: a.wallExpiresAt, TTL: s.lim.AttemptTTL, Host: a.host, Peer: a.peer, Consumed: a.consumed,
	}
	if l, ok := s.listings[a.listing]; ok {
		v.HostPresence = l.presence
		if p, ok := s.presence[l.presence]; ok {
			v.HostPresencePublic = p.public
		}
	}
	return v
}

// ApplyBatch takes the lock once (so a cancelled batch changes nothing),
// then runs each op as the reference runs every transition: Cleanup (a full
// scan of every collection) first, then the transition.
func (s *Store) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	if _, err := s.atomic(ctx); err != nil {
		return err
	}
	defer s.gate.Unlock()
	for i := range ops {
		op := &ops[i]
		op.Result, op.Err, op.PresenceView, op.Attempt, op.Intro = engine.Result{}, nil, engine.PresenceView{}, engine.AttemptView{}, engine.Introduction{}
		op.IntroReady, op.FirstIntro = false, false
		op.RelayIntro, op.RelayReady, op.FirstRelay, op.Duplicate, op.Tenant = engine.RelayIntroduction{}, false, false, false, engine.Tenant{}
		if i > 0 {
			s.cleanup(s.clock.Now())
		}
		switch op.Kind {
		case engine.OpPresence:
			if op.Err = validatePresence(&op.Presence); op.Err == nil {
				op.PresenceView, op.Result = s.bindPresence(&op.Presence, s.clock.Now())
			}
		case engine.OpBindAttempt:
			if op.Err = validateBind(&op.Bind); op.Err == nil && op.Bind.Relayed.IsValid() {
				op.Err = errNoRelay
			}
			if op.Err == nil {
				s.batchBind(op)
			}
		case engine.OpOutcome:
			if op.Err = engine.ValidateReport(&op.Report); op.Err == nil {
				op.Err = errNoRelay
			}
		default:
			op.Err = inputErr("kind", "must be OpPresence, OpBindAttempt or OpOutcome")
		}
	}
	return nil
}

// batchBind binds and, when both sides are bound, consumes or reads back the
// introduction, in one transition.
func (s *Store) batchBind(op *engine.Op) {
	a, r := s.bindAttempt(&op.Bind)
	op.Result = r
	if a == nil {
		return
	}
	if a.host.Bound() && a.peer.Bound() {
		op.IntroReady = true
		if !a.consumed {
			a.consumed, op.FirstIntro = true, true
		}
		op.Intro = introduction(a)
	}
	op.Attempt = s.attemptSnapshot(a)
}
