// Package refstore is a faithful Go port of the reference store's algorithm
// (InMemoryEphemeralRendezvousStore.cs of the reference design, whose rules
// docs/contracts/semantics.md#atomic-transitions states), used only as the baseline
// the engine's MemStore is measured against. It keeps the reference's
// shape on purpose: plain maps, one mutex, and full scans on every call —
// Cleanup filters every collection (LINQ Where(...).ToArray()), owner and
// tenant counts scan all listings or attempts, removing a listing scans all
// attempts for its cascade, and browse filters and sorts all listings.
//
// The parts of engine.Store the reference does not have (tenant and owner
// scoping, presence sequence numbers, the pending-offer list, introduction
// read-back, ApplyBatch) are written the same way: the straightforward scan.
// It passes the same contract suite (engine/storetest) as MemStore, so a
// benchmark comparison is between two stores with the same semantics.
//
// All methods are safe for concurrent use. Never use it in the service.
package refstore

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Store implements engine.Store and engine.Inspector.
type Store struct {
	gate  sync.Mutex // the reference's lock (_gate)
	lim   engine.Limits
	clock engine.Clock
	keys  *engine.Keyring
	id    engine.UUID

	// Wall time derives from monotonic time, as WallDeadline does.
	wallOrigin time.Time
	monoOrigin time.Duration

	listings        map[engine.ListingID]*listingEntry
	leases          map[engine.LeaseID]engine.ListingID
	presenceHandles map[engine.Handle]engine.ListingID
	presence        map[engine.Handle]*presenceEntry
	attempts        map[engine.AttemptID]*attemptEntry
	attemptHandles  map[engine.Handle]engine.AttemptID
	idempotency     map[string]*idemEntry
	replay          map[string]time.Duration
	revocations     map[engine.Subject]time.Duration
	// tenantRevocations are revocations confined to one tenant; they share
	// the revocation pool with revocations.
	tenantRevocations map[tenantSubject]time.Duration

	draining      bool
	drainDeadline time.Duration
	available     bool
	created       uint64 // attempt creation counter (pending order)
}

type listingEntry struct {
	id            engine.ListingID
	lease         engine.LeaseID
	presence      engine.Handle
	tenant        engine.Tenant
	owner         engine.Subject
	spec          *engine.ListingSpec
	doc           []byte
	leaseKey      engine.Fingerprint
	presenceKey   engine.Fingerprint
	leaseDeadline time.Duration
	wallExpiresAt time.Time
	version       uint64
	players       int
	lastSeq       uint64 // survives presence expiry
}

type presenceEntry struct {
	public, local netip.AddrPort
	deadline      time.Duration
}

type attemptEntry struct {
	id                 engine.AttemptID
	handle             engine.Handle
	tenant             engine.Tenant
	listing            engine.ListingID
	client             engine.Subject
	protocol           uint32
	hostKey, clientKey engine.Fingerprint
	deadline           time.Duration
	wallExpiresAt      time.Time
	host, peer         engine.Binding
	consumed           bool
	created            uint64
}

type idemEntry struct {
	tenant   engine.Tenant  // counted against TenantIdempotencyQuota
	subject  engine.Subject // the creator: counted against SubjectIdempotencyQuota
	request  [32]byte
	listing  engine.ListingID
	attempt  engine.AttemptID
	deadline time.Duration
}

var (
	_ engine.Store     = (*Store)(nil)
	_ engine.Inspector = (*Store)(nil)
)

// New returns an empty, available store with a new instance ID.
func New(l engine.Limits, c engine.Clock, k *engine.Keyring) (*Store, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &Store{
		lim: l, clock: c, keys: k, id: engine.NewUUID(),
		wallOrigin: c.Wall(), monoOrigin: c.Now(),
		listings:          map[engine.ListingID]*listingEntry{},
		leases:            map[engine.LeaseID]engine.ListingID{},
		presenceHandles:   map[engine.Handle]engine.ListingID{},
		presence:          map[engine.Handle]*presenceEntry{},
		attempts:          map[engine.AttemptID]*attemptEntry{},
		attemptHandles:    map[engine.Handle]engine.AttemptID{},
		idempotency:       map[string]*idemEntry{},
		replay:            map[string]time.Duration{},
		revocations:       map[engine.Subject]time.Duration{},
		tenantRevocations: map[tenantSubject]time.Duration{},
		available:         true,
	}, nil
}

func (s *Store) InstanceID() engine.UUID { return s.id }

func (s *Store) Available() bool {
	s.gate.Lock()
	defer s.gate.Unlock()
	return s.available
}

func (s *Store) Draining() bool {
	s.gate.Lock()
	defer s.gate.Unlock()
	return s.draining
}

// atomic is the reference's Atomic<T>: check ctx, lock, check ctx, Cleanup.
// On success the caller holds the lock and must call s.gate.Unlock.
func (s *Store) atomic(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.gate.Lock()
	if err := ctx.Err(); err != nil {
		s.gate.Unlock()
		return 0, err
	}
	return s.cleanNow(), nil
}

// cleanNow reads the clock and runs the reference's Cleanup, which comes
// first in every operation, under the lock the caller holds; it returns
// the time it read.
func (s *Store) cleanNow() time.Duration {
	now := s.clock.Now()
	s.cleanup(now)
	return now
}

// transition runs fn in the atomic section, after cleanup, with the time
// it read; before it, a done context is the error and a store marked
// unavailable answers ServiceUnavailable, as for every transition.
func (s *Store) transition(ctx context.Context, fn func(now time.Duration) engine.Result) (engine.Result, error) {
	now, err := s.atomic(ctx)
	if err != nil {
		return engine.Result{}, err
	}
	defer s.gate.Unlock()
	if !s.available {
		return engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	return fn(now), nil
}

// cleanup is the reference's Cleanup: every collection scanned in full on
// every operation, expired keys collected into a fresh slice first.
func (s *Store) cleanup(now time.Duration) {
	if s.draining && now >= s.drainDeadline {
		s.clearActiveState()
	}
	for _, k := range whereExpired(s.revocations, now, deadlineOf) {
		delete(s.revocations, k)
	}
	for _, k := range whereExpired(s.tenantRevocations, now, deadlineOf) {
		delete(s.tenantRevocations, k)
	}
	for _, k := range whereExpired(s.replay, now, deadlineOf) {
		delete(s.replay, k)
	}
	for _, k := range whereExpired(s.idempotency, now, func(e *idemEntry) time.Duration { return e.deadline }) {
		delete(s.idempotency, k)
	}
	for _, h := range whereExpired(s.presence, now, func(p *presenceEntry) time.Duration { return p.deadline }) {
		delete(s.presence, h)
	}
	for _, id := range whereExpired(s.attempts, now, func(a *attemptEntry) time.Duration { return a.deadline }) {
		s.removeAttempt(id)
	}
	for _, id := range whereExpired(s.listings, now, func(l *listingEntry) time.Duration { return l.leaseDeadline }) {
		s.removeListing(id)
	}
}

// whereExpired collects the keys of m whose deadline has passed into a fresh
// slice, the reference's Where(deadline <= now).Select(key).ToList().
func whereExpired[K comparable, V any](m map[K]V, now time.Duration, deadline func(V) time.Duration) []K {
	var ks []K
	for k, v := range m {
		if deadline(v) <= now {
			ks = append(ks, k)
		}
	}
	return ks
}

// deadlineOf is the deadline of a map that holds only deadlines.
func deadlineOf(d time.Duration) time.Duration { return d }

// clearActiveState erases everything but revocations, as the reference does.
func (s *Store) clearActiveState() {
	clear(s.listings)
	clear(s.leases)
	clear(s.presenceHandles)
	clear(s.presence)
	clear(s.attempts)
	clear(s.attemptHandles)
	clear(s.idempotency)
	clear(s.replay)
}

// removeListing removes a listing, its presence, and — scanning every
// attempt — each attempt linked to it.
func (s *Store) removeListing(id engine.ListingID) {
	l, ok := s.listings[id]
	if !ok {
		return
	}
	delete(s.listings, id)
	delete(s.leases, l.lease)
	delete(s.presenceHandles, l.presence)
	delete(s.presence, l.presence)
	var linked []engine.AttemptID
	for aid, a := range s.attempts {
		if a.listing == id {
			linked = append(linked, aid)
		}
	}
	for _, aid := range linked {
		s.removeAttempt(aid)
	}
}

func (s *Store) removeAttempt(id engine.AttemptID) {
	if a, ok := s.attempts[id]; ok {
		delete(s.attempts, id)
		delete(s.attemptHandles, a.handle)
	}
}

func (s *Store) wallDeadline(now, ttl time.Duration) time.Time {
	return s.wallOrigin.Add(now - s.monoOrigin + ttl)
}

// admission is CheckNewWorkAdmission, with revocations confined to the
// tenant the subject acts in.
func (s *Store) admission(tenant engine.Tenant, subject engine.Subject) (engine.Result, bool) {
	switch {
	case !s.available:
		return engine.Result{Outcome: engine.ServiceUnavailable}, true
	case s.draining:
		return engine.Result{Outcome: engine.Draining}, true
	}
	if _, ok := s.revocations[subject]; ok {
		return engine.Result{Outcome: engine.Revoked}, true
	}
	if _, ok := s.tenantRevocations[tenantSubject{tenant, subject}]; ok {
		return engine.Result{Outcome: engine.Revoked}, true
	}
	return engine.Result{}, false
}

func (s *Store) BeginDrain(ctx context.Context) error {
	now, err := s.atomic(ctx)
	if err != nil {
		return err
	}
	defer s.gate.Unlock()
	if !s.draining {
		s.draining, s.drainDeadline = true, now+s.lim.DrainWindow
	}
	return nil
}

func (s *Store) MarkUnavailable() {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.available = false
	s.clearActiveState()
}

// Stats counts InFlight by scanning every attempt.
func (s *Store) Stats() engine.Stats {
	s.gate.Lock()
	defer s.gate.Unlock()
	s.cleanup(s.clock.Now())
	st := engine.Stats{InstanceID: s.id, Available: s.available, Draining: s.draining}
	used := [engine.NumGlobalPools]int{len(s.listings), len(s.presence), len(s.attempts), len(s.replay), s.nRevocations(), len(s.idempotency)}
	ceil := [engine.NumGlobalPools]int{s.lim.MaxListings, s.lim.MaxPresence, s.lim.MaxAttempts, s.lim.MaxReplay, s.lim.MaxRevocations, s.lim.MaxIdempotency}
	for i := range st.Pools {
		st.Pools[i] = engine.PoolStat{Used: used[i], Ceiling: ceil[i]}
	}
	for _, a := range s.attempts {
		if !a.consumed {
			st.InFlight++
		}
	}
	return st
}
