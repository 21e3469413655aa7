package bench

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/bench/refstore"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// StoreSink keeps benchmark results alive so the compiler cannot drop the work.
var StoreSink uint64

// storeTenant is the one tenant every fill uses: browse and quotas see all of it.
var storeTenant = engine.Tenant{Game: "bench-game", Env: "load"}

// storeImpls are the stores compared: MemStore and the reference baseline,
// and the Redis store.
var storeImpls = map[string]func(engine.Limits, engine.Clock, *engine.Keyring) (engine.Store, error){
	"mem": func(l engine.Limits, c engine.Clock, k *engine.Keyring) (engine.Store, error) {
		return memstore.New(l, c, k)
	},
	"ref": func(l engine.Limits, c engine.Clock, k *engine.Keyring) (engine.Store, error) {
		return refstore.New(l, c, k)
	},
	"redis": newRedisStore, // its own benchmarks only (store_redis_test.go)
}

// storeCase is one (implementation, fill) point of a side-by-side benchmark.
type storeCase struct {
	impl     string
	listings int
}

func (c storeCase) name() string { return fmt.Sprintf("impl=%s/listings=%d", c.impl, c.listings) }

// storeCases: mem and ref side by side at the default ceilings (25,000),
// and mem alone at 1,000 and 250,000 (a 250,000 refstore fill takes far
// too long: every call scans everything).
var storeCases = []storeCase{{"ref", 25_000}, {"mem", 1_000}, {"mem", 25_000}, {"mem", 250_000}}

// storeLimits scales the default ceilings with the listing count: at 25,000
// they are exactly engine.DefaultLimits (10,000 attempts, 35,000
// idempotency records) and a fill reaches every one of them. headroom
// raises the listing, attempt and idempotency ceilings (not the fill) so the
// churn and attempt-flow benchmarks can keep creating without shedding.
func storeLimits(listings int, headroom bool) engine.Limits {
	l := engine.DefaultLimits()
	attempts := listings * 2 / 5
	l.MaxListings, l.MaxPresence, l.MaxAttempts = listings, listings, attempts
	l.MaxIdempotency = listings + attempts
	l.MaxReplay, l.MaxRevocations = listings*6/5, attempts
	if headroom {
		l.MaxListings++
		l.MaxAttempts += 1 << 22
		l.MaxIdempotency += 1 << 22
	}
	// The fill comes from one tenant and a few principals.
	return l.WholePools()
}

// storeFixture is a store filled through its public API to its ceilings:
// every listing with fresh presence, the attempt pool full of unbound
// attempts, the idempotency pool full. It remembers what a client would
// know (IDs, fingerprints, the last sequence and version) so benchmarks can
// issue valid operations forever: the manual clock never moves.
type storeFixture struct {
	s         engine.Store
	k         *engine.Keyring
	ls        []engine.ListingView
	leaseKeys []engine.Fingerprint
	presKeys  []engine.Fingerprint
	seq       []uint64
	version   []uint64
	sorted    []engine.ListingID // for browse cursors
	next      int                // rotating index into ls
	serial    int                // for idempotency keys
	// offered is how many listings, from the first, hold one of the
	// fill's unbound attempts: a refresh of one answers a pending offer.
	offered int
	cursors map[int]int // batchPresenceIn's rotating index per range start
}

var (
	fixtureMu    sync.Mutex
	fixtureCache = map[string]*storeFixture{}
)

// fixture returns the fill for c, built once per process and shared by
// every timing benchmark: a refstore fill at 25,000 listings takes over a
// minute because every call scans everything. The churn and attempt-flow
// benchmarks (run last) add idempotency records and consumed attempts to it.
func fixture(b *testing.B, c storeCase) *storeFixture {
	b.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if f, ok := fixtureCache[c.name()]; ok {
		return f
	}
	f, err := newFixture(c, true, 1)
	if err != nil {
		b.Fatal(err)
	}
	fixtureCache[c.name()] = f
	runtime.GC() // measure from a quiet heap, not during the fill's last GC cycle
	return f
}

func fillSpec(i, meta int) engine.ListingSpec {
	sp := engine.ListingSpec{
		Region: []string{"eu-central", "us-east", "ap-south", "sa-east"}[i%4], ProtocolVersion: 7,
		BuildVersion: "1.2.3", DisplayName: fmt.Sprintf("Bench host %d", i),
		Visibility: engine.Public, TrustMode: engine.PlayerHosted, CurrentPlayers: 1, MaxPlayers: 8,
	}
	for j := 0; j < meta; j++ {
		sp.Metadata = append(sp.Metadata, engine.MetaEntry{Key: fmt.Sprintf("key%02d", j), Value: fmt.Sprintf("value-%06d-%02d", i, j)})
	}
	return sp
}

// fillDoc is a realistic pre-encoded JSON document of the immutable fields,
// as the HTTP layer attaches it.
func fillDoc(sp *engine.ListingSpec) []byte {
	doc := fmt.Appendf(nil, `{"region":%q,"protocol_version":%d,"build_version":%q,"display_name":%q,"visibility":"public","trust_mode":"player_hosted","max_players":%d,"metadata":{`,
		sp.Region, sp.ProtocolVersion, sp.BuildVersion, sp.DisplayName, sp.MaxPlayers)
	for j, e := range sp.Metadata {
		if j > 0 {
			doc = append(doc, ',')
		}
		doc = fmt.Appendf(doc, "%q:%q", e.Key, e.Value)
	}
	return append(doc, "}}"...)
}

// fillSeq is the fill's presence sequence: a host's heartbeat count after
// about six days at one every five seconds, so a refresh carries as many
// digits as a running host's does (the Redis store's records hold them).
const fillSeq = 100_000

func hostAddr(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), uint16(1024+i%60000))
}

func newFixture(c storeCase, headroom bool, meta int) (*storeFixture, error) {
	clock := engine.NewManualClock()
	var key [32]byte
	copy(key[:], "rendezvous benchmark keyring....")
	k := engine.NewKeyring(key)
	l := storeLimits(c.listings, headroom)
	s, err := storeImpls[c.impl](l, clock, k)
	if err != nil {
		return nil, err
	}
	f := &storeFixture{s: s, k: k}
	ctx := context.Background()
	n := c.listings
	f.ls = make([]engine.ListingView, n)
	f.leaseKeys, f.presKeys = make([]engine.Fingerprint, n), make([]engine.Fingerprint, n)
	f.seq, f.version = make([]uint64, n), make([]uint64, n)
	for i := 0; i < n; i++ {
		sp := fillSpec(i, meta)
		cmd := engine.CreateListing{Tenant: storeTenant, Owner: engine.Subject(fmt.Sprintf("pub-%d", i/50)),
			IdempotencyKey: fmt.Sprintf("fill-%d", i), Spec: sp, Doc: fillDoc(&sp)}
		v, r, err := s.CreateListing(ctx, cmd)
		if err != nil || !r.OK() {
			return nil, fmt.Errorf("fill listing %d: %v %v", i, r.Outcome, err)
		}
		lc, pc := k.Lease(v.Lease), k.Presence(v.Presence)
		f.leaseKeys[i], f.presKeys[i] = engine.FingerprintOf(&lc), engine.FingerprintOf(&pc)
		f.seq[i], f.version[i] = fillSeq, v.Version
		if _, r, err := s.BindHostPresence(ctx, engine.BindPresence{Handle: v.Presence, Key: f.presKeys[i], Seq: fillSeq, Public: hostAddr(i)}); err != nil || !r.OK() {
			return nil, fmt.Errorf("fill presence %d: %v %v", i, r.Outcome, err)
		}
		v.Spec, v.Doc = nil, nil // the fixture keeps IDs only, not a second copy of the data
		f.ls[i] = v
	}
	f.offered = min(l.MaxAttempts, n*2/5, n)
	for j := 0; j < f.offered; j++ {
		cmd := engine.CreateAttempt{Tenant: storeTenant, Client: engine.Subject(fmt.Sprintf("cli-%d", j%100)),
			IdempotencyKey: fmt.Sprintf("fill-join-%d", j), Listing: f.ls[j%n].ID, ProtocolVersion: 7}
		if _, r, err := s.CreateJoinAttempt(ctx, cmd); err != nil || !r.OK() {
			return nil, fmt.Errorf("fill attempt %d: %v %v", j, r.Outcome, err)
		}
	}
	f.sorted = make([]engine.ListingID, n)
	for i := range f.ls {
		f.sorted[i] = f.ls[i].ID
	}
	slices.SortFunc(f.sorted, func(a, b engine.ListingID) int { return a.Compare(b.UUID) })
	return f, nil
}

// pick returns the next fill listing index, round robin.
func (f *storeFixture) pick() int {
	i := f.next
	f.next++
	if f.next == len(f.ls) {
		f.next = 0
	}
	return i
}
