package memstore

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Store is the in-memory engine.Store
// (docs/contracts/semantics.md#atomic-transitions): one commit lock serialises
// every transition; records live in slabs (pooled, pointer-light); keys are
// hashed once and indexes are sharded by that hash; expiry is an ordered
// schedule drained at the start of every operation in amortised O(expired);
// counts per owner, tenant and pool are kept incrementally; browse walks an
// ordered per-(tenant, protocol[, region]) index. No operation scans a
// collection.
//
// All methods are safe for concurrent use. Views returned never alias
// mutable store state.
type Store struct {
	// mu is the commit lock (see commit.go). Transitions hold it
	// exclusively; AttemptHost holds it shared.
	mu    sync.RWMutex
	lim   engine.Limits
	clock engine.Clock
	keys  *engine.Keyring
	id    engine.UUID
	seed  uint64 // for caller-chosen keys

	// Wall time is derived from the monotonic clock and these origins, so
	// moving the wall clock never expires or prolongs anything.
	wallOrigin time.Time
	monoOrigin time.Duration
	// wallNanos is wallOrigin in Unix nanoseconds minus monoOrigin: a
	// deadline's wall time in Unix nanoseconds is wallNanos+d (see wallMilli).
	wallNanos int64

	available     atomic.Bool
	draining      atomic.Bool
	drainDeadline time.Duration // valid while draining

	listings slab[listingRec]
	docs     []listingDoc // by listing slot
	// bents is, by listing slot, what the browse indexes and walk read:
	// live players and attributes, creation stamp, key version (pointer
	// holding, so not in the record).
	bents []BrowseEntry
	// browseVersion is the change version: bumped by every transition
	// that changes a listing's players (BrowseEntry.KeyVersion). It starts
	// at 1, so a first page's Since is never 0.
	browseVersion uint64
	// listingIdem is, by listing slot, the idempotency record that created
	// the listing; each renewal extends it (see idemRec).
	listingIdem       []int32
	leaseExp, presExp expiryList // over listing slots
	byOwner           chain      // over listing slots: subjectRec.listings
	nPresence         int        // listings with fresh presence
	listingByID       uuidIndex
	listingByLease    uuidIndex
	listingByPresence uuidIndex

	attempts                   slab[attemptRec]
	attemptExp                 expiryList // over attempt slots
	byListing, pending, byClnt chain      // over attempt slots
	inFlight                   int        // attempts not consumed
	attemptByID                uuidIndex
	attemptByHandle            uuidIndex

	// Tombstones of ended attempts (tombstone.go).
	tombs    slab[tombRec]
	tombExp  expiryList // over tomb slots
	tombByID uuidIndex
	// tombByTenant is every tenant's list of tombstones, over tomb slots
	// (the lists' heads are the tenants', tenantRec.tombs).
	tombByTenant []expNode

	subjects    slab[subjectRec]
	subjectIdx  hashIndex
	revocations deadlineHeap // over subject slots

	tenantRevs    slab[tenantRevRec] // revocations confined to one tenant
	tenantRevIdx  hashIndex
	tenantRevHeap deadlineHeap

	tenants   slab[tenantRec]
	tenantIdx hashIndex

	browse    slab[browseRec]
	browseIdx hashIndex

	idem    slab[idemRec]
	idemIdx hashIndex
	idemExp expiryList

	replay     slab[replayRec]
	replayIdx  hashIndex
	replayHeap deadlineHeap

	warmSink uint64 // see warm (batch.go)
}

var (
	_ engine.Store     = (*Store)(nil)
	_ engine.Inspector = (*Store)(nil)
)

// New returns an empty, available store with a new instance ID.
// l.Validate's error is returned as is.
func New(l engine.Limits, c engine.Clock, k *engine.Keyring) (*Store, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	if c == nil || k == nil {
		panic("BUG: memstore.New needs a clock and a keyring")
	}
	s := &Store{
		lim: l, clock: c, keys: k, id: engine.NewUUID(), seed: newSeed(),
		wallOrigin: c.Wall(), monoOrigin: c.Now(), browseVersion: 1,
	}
	s.wallNanos = s.wallOrigin.UnixNano() - int64(s.monoOrigin)
	s.available.Store(true)
	return s, nil
}

func (s *Store) InstanceID() engine.UUID { return s.id }

// Available is false once MarkUnavailable was called. Lock-free.
func (s *Store) Available() bool { return s.available.Load() }

// Draining is true once BeginDrain was called (also after the window). Lock-free.
func (s *Store) Draining() bool { return s.draining.Load() }

// wall converts a monotonic deadline to informational wall time.
func (s *Store) wall(d time.Duration) time.Time { return s.wallOrigin.Add(d - s.monoOrigin) }

// wallMilli is s.wall(d).UnixMilli() without building a time.Time (browse
// renders one per item). Valid for wall times between 1678 and 2262, which
// UnixNano covers.
func (s *Store) wallMilli(d time.Duration) int64 {
	ns := s.wallNanos + int64(d)
	ms := ns / 1e6
	if ns%1e6 < 0 {
		ms-- // round toward minus infinity, as UnixMilli does
	}
	return ms
}
