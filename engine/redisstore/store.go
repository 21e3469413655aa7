// Package redisstore is engine.Store on Redis, for several instances sharing
// one state. Every Store method is exactly one call of a Redis Function
// (scripts/*.lua, one transition per file, after the shared helpers of
// scripts/prelude/, one file per concern, all loaded as the library
// "rendezvous"): the function is the commit lock, and it decides ceilings,
// quotas, idempotency, CAS, cascade, revocation, drain, one-time
// introduction and the replay guard itself; nothing is read, decided in Go
// and written back.
//
// The Go files carry the memory store's names for the same transitions
// (listing_create.go, listing_ops.go, attempt_create.go, attempt_ops.go,
// presence_ops.go, relay_ops.go, revoke.go, tenant_revoke.go, replay.go,
// drain.go, browse.go, quick_join.go, batch.go, tenant_usage.go,
// invariants.go, snapshot.go), so one name finds a transition in either
// store. A
// function's arguments are named once on each side: ARG in
// scripts/prelude/15_arguments.lua and the positions of args.go.
//
// Expiry never scans: each pool keeps its deadlines in a sorted set, every
// transition first removes what is due in the pools it reads (O(log n) per
// expired record), pool occupancy is the sorted set's cardinality and
// per-owner and per-tenant counts are kept incrementally. BrowseVisible
// walks a per-(tenant, protocol[, region]) sorted set holding exactly the
// visible listings; BrowseItems, the page HTTP serves, is read from the
// instance's local copy of that index, kept in step by a change log the
// same functions write (browse_mirror.go), with one small call per page.
// Filters, orders and continuations, and a quick join's candidates, are
// walked on that local copy with the in-memory store's walk
// (browse_index.go).
// The log carries the revocations too, so the instance checks a request's
// caller against its own copy (browse_revocations.go); the single reads an
// authenticated request makes decide it in their own call (reads_as.go).
//
// Capabilities are derived in Go from the shared engine.Keyring; Redis holds
// fingerprints only. Time is the Redis server's (TIME, in microseconds,
// clamped so it never runs backwards), or, as a test hook, a Clock whose Now
// is passed to every call.
//
// Every key lives under one hash-tagged prefix ("rdv:{name}:"), so a
// function may touch any of them: one Redis, or a Sentinel-managed primary;
// not Redis Cluster.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// DefaultTimeout bounds every call to Redis.
const DefaultTimeout = 2 * time.Second

// Config configures a Store.
type Config struct {
	// Client is connected to the Redis primary. The Store does not close it.
	Client rueidis.Client
	// Name separates deployments sharing one Redis: keys are "rdv:{Name}:...".
	// Empty means "rdv".
	Name    string
	Limits  engine.Limits
	Keyring *engine.Keyring
	// Clock is a test hook: when set, "now" is Clock.Now() in nanoseconds,
	// passed to every call, instead of the server's TIME.
	Clock engine.Clock
	// Timeout bounds each call (DefaultTimeout if zero).
	Timeout time.Duration
	// InstanceLease, when set, makes the store serve only under a live
	// registration in the deployment's instance registry (Register; see
	// registry.go). Logger receives the registry's events (nil: none).
	InstanceLease time.Duration
	Logger        *slog.Logger
	// AckReplicas, when above zero, makes every write the HTTP API
	// acknowledges wait until that many replicas hold it, AckTimeout at
	// most (DefaultAckTimeout if zero; acks.go).
	AckReplicas int
	AckTimeout  time.Duration
}

// Store implements engine.Store and engine.Inspector on Redis.
type Store struct {
	c       rueidis.Client
	prefix  string
	lim     engine.Limits
	keys    *engine.Keyring
	clock   engine.Clock  // nil: the server's TIME
	tick    time.Duration // one unit of the scripts' time: 1ns with Clock, else 1µs
	limits  string        // ARGV[2] of every call
	timeout time.Duration
	id      engine.UUID
	idArg   string // id as the scripts record it (the instance a refresh or bind reached)

	// With Clock, wall time derives from monotonic time (as MemStore's), so
	// moving the wall clock never expires or prolongs anything.
	wallOrigin time.Time
	monoOrigin time.Duration

	handleKey engine.Capability // see presenceHandle
	listings  *presenceListings
	recheck   atomic.Bool // a call failed: check the library's version first (call)
	refs      callRefs
	reg       registration
	refusals  refusalLog   // refusals.go
	mirror    browseMirror // BrowseItems' local index (browse_mirror.go)

	acks       int64 // Config.AckReplicas
	ackTimeout time.Duration
}

var (
	_ engine.Store     = (*Store)(nil)
	_ engine.Inspector = (*Store)(nil)
)

// New validates cfg, loads the function library if the server does not run
// this build's version, and returns a store with a new instance ID.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	if cfg.Client == nil || cfg.Keyring == nil {
		return nil, errors.New("redisstore: Config needs a Client and a Keyring")
	}
	name := cfg.Name
	if name == "" {
		name = "rdv"
	}
	if strings.ContainsAny(name, "{}") {
		return nil, fmt.Errorf("redisstore: name %q must not contain braces", name)
	}
	s := &Store{
		c: cfg.Client, prefix: "rdv:{" + name + "}:", lim: cfg.Limits, keys: cfg.Keyring,
		clock: cfg.Clock, tick: time.Microsecond, timeout: cfg.Timeout, id: engine.NewUUID(),
	}
	s.idArg = uuidArg(s.id)
	s.refs.move()
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	if s.clock != nil {
		s.tick = time.Nanosecond
		s.wallOrigin, s.monoOrigin = s.clock.Wall(), s.clock.Now()
	}
	s.limits = s.limitsArg()
	s.acks, s.ackTimeout = int64(max(cfg.AckReplicas, 0)), cfg.AckTimeout
	if s.ackTimeout <= 0 {
		s.ackTimeout = DefaultAckTimeout
	}
	if s.acks > 0 && s.ackTimeout >= s.timeout {
		return nil, fmt.Errorf("redisstore: AckTimeout %v must be below the call timeout %v", s.ackTimeout, s.timeout)
	}
	s.reg.lease, s.reg.log = cfg.InstanceLease, cfg.Logger
	if s.reg.log == nil {
		s.reg.log = slog.New(slog.DiscardHandler)
	}
	s.listings = newPresenceListings(2 * cfg.Limits.MaxPresence)
	s.handleKey = s.keys.Lease(engine.LeaseID{UUID: handleKeyID})
	lctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := loadLibrary(lctx, s.c); err != nil {
		return nil, err
	}
	if err := s.migratePresence(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// limitsArg renders the limits in the order of LIMITS in
// scripts/prelude/10_context.lua, which names them.
func (s *Store) limitsArg() string {
	l := s.lim
	t := func(d time.Duration) int64 { return int64(d / s.tick) }
	v := []int64{
		t(l.LeaseTTL), t(l.PresenceTTL), t(l.AttemptTTL), t(l.ReplayTTL), t(l.IdempotencyTTL), t(l.DrainWindow),
		int64(l.MaxListings), int64(l.MaxPresence), int64(l.MaxAttempts), int64(l.MaxReplay),
		int64(l.MaxRevocations), int64(l.MaxIdempotency), int64(l.OwnerListingQuota), int64(l.TenantAttemptQuota),
		int64(l.SubjectAttemptQuota), int64(l.TenantListingQuota), int64(l.TenantIdempotencyQuota),
		t(engine.TombstoneTTL), int64(l.SubjectIdempotencyQuota),
	}
	b := make([]string, len(v))
	for i, n := range v {
		b[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(b, " ")
}

func (s *Store) InstanceID() engine.UUID { return s.id }

// Available is false once MarkUnavailable was called (by any instance of
// the deployment) or when Redis does not answer.
func (s *Store) Available() bool {
	f, ok := s.state()
	return ok && !f[0]
}

// Draining is true once BeginDrain was called (also after the window), or
// DrainInstance on this instance.
func (s *Store) Draining() bool {
	if s.reg.draining.Load() {
		return true
	}
	f, ok := s.state()
	return ok && f[1]
}

func (s *Store) state() (flags [2]bool, ok bool) {
	m, ok, _ := s.call(context.Background(), "rdv_state")
	if !ok {
		return flags, false
	}
	a, err := m.ToArray()
	if err != nil || len(a) != 2 {
		return flags, false
	}
	for i := range flags {
		n, _ := a[i].AsInt64()
		flags[i] = n == 1
	}
	return flags, true
}

// ints reads an array reply of integers (0 where one is not).
func ints(a []rueidis.RedisMessage) []int64 {
	n := make([]int64, len(a))
	for i := range a {
		n[i], _ = a[i].AsInt64()
	}
	return n
}
