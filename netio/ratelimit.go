package netio

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Rate limiter geometry: the memory is fixed at construction
// (limiterShards × limiterSlots entries of 24 bytes, 1.5 MiB) whatever the
// number of sources. A source that finds no slot in its probe window may
// take only an empty slot or one whose bucket has refilled to the burst:
// forgetting such a bucket loses nothing, as the source would find it full
// anyway. Evicting a partly spent bucket would hand its source a fresh
// burst when it returns, so a source cycling others through the table
// could multiply its answers; when every slot of the window holds a
// partly spent bucket, the new source gets no answer (fail closed) until
// one has refilled.
const (
	DefaultErrorRate  = 10.0 // unsigned error answers per second per source
	DefaultErrorBurst = 20

	limiterShards = 64 // power of two
	limiterSlots  = 1024
	limiterProbe  = 4
)

// rateLimiter is a per-source token bucket for unsigned error answers
// (docs/contracts/udp.md#rate-limit-of-unsigned-errors), keyed by the IPv4
// address or the IPv6 /64. Keys are hashed once; the hash picks a shard (its
// own mutex) and a slot. Tokens are kept in nanoseconds of credit, as
// wireguard-go's ratelimiter does. Safe for concurrent use; Allow does not
// allocate.
type rateLimiter struct {
	cost, max int64 // nanoseconds per answer, burst × cost
	// seed is hashed with every key, so which sources share a shard and a
	// probe window cannot be computed in advance to crowd out a victim's bucket.
	seed   uint64
	shards [limiterShards]limiterShard
}

type limiterShard struct {
	mu    sync.Mutex
	slots [limiterSlots]limiterEntry
	_     [64]byte // keep neighbouring shard locks off one cache line
}

type limiterEntry struct {
	key    uint64 // 0 = empty (keys are made non-zero)
	last   int64  // nanoseconds
	tokens int64
}

// newRateLimiter takes a positive rate and burst: Config.normalize fills
// the defaults.
func newRateLimiter(rate float64, burst int) *rateLimiter {
	if !(rate > 0) || burst <= 0 {
		panic("BUG: newRateLimiter needs a positive rate and burst")
	}
	cost := int64(1e9 / rate)
	if cost < 1 {
		cost = 1
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:]) // never fails since Go 1.24: it crashes the process instead
	return &rateLimiter{cost: cost, max: cost * int64(burst), seed: binary.LittleEndian.Uint64(seed[:])}
}

// sourceKey is the IPv4 address or the IPv6 /64 prefix, never zero.
func sourceKey(a netip.Addr) uint64 {
	a = a.Unmap()
	if a.Is4() {
		v := a.As4()
		return 1<<63 | uint64(binary.BigEndian.Uint32(v[:]))
	}
	v := a.As16()
	if k := binary.BigEndian.Uint64(v[:8]); k != 0 { // the /64 prefix
		return k
	}
	return 1 // ::/64, which no real source has
}

// Allow takes one token from the source's bucket at time now (nanoseconds
// of a monotonic clock) and reports whether there was one.
func (l *rateLimiter) Allow(src netip.Addr, now int64) bool {
	key := sourceKey(src)
	var kb [16]byte
	binary.LittleEndian.PutUint64(kb[:8], l.seed)
	binary.LittleEndian.PutUint64(kb[8:], key)
	h := xxhash.Sum64(kb[:])
	s := &l.shards[h&(limiterShards-1)]
	base := int(h>>32) % limiterSlots
	s.mu.Lock()
	defer s.mu.Unlock()
	victim := -1
	for i := 0; i < limiterProbe; i++ {
		j := (base + i) % limiterSlots
		e := &s.slots[j]
		if e.key == key {
			e.tokens += now - e.last
			e.last = now
			if e.tokens > l.max {
				e.tokens = l.max
			}
			if e.tokens < l.cost {
				return false
			}
			e.tokens -= l.cost
			return true
		}
		if victim < 0 && (e.key == 0 || e.tokens+(now-e.last) >= l.max) {
			victim = j
		}
	}
	if victim < 0 {
		return false
	}
	s.slots[victim] = limiterEntry{key: key, last: now, tokens: l.max - l.cost}
	return true
}
