package netio

import (
	"net/netip"
	"testing"
	"time"
)

func TestRateLimiter(t *testing.T) {
	l := newRateLimiter(10, 20)
	src := netip.MustParseAddr("198.51.100.1")
	now := int64(time.Hour)
	allowed := func(a netip.Addr, n int) int {
		t.Helper()
		k := 0
		for i := 0; i < n; i++ {
			if l.Allow(a, now) {
				k++
			}
		}
		return k
	}
	f := func(name string, got, want int) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %d allowed, want %d", name, got, want)
		}
	}
	f("burst", allowed(src, 100), 20)
	f("empty bucket", allowed(src, 5), 0)
	now += int64(time.Second) // 10 tokens back
	f("refill", allowed(src, 100), 10)
	now += int64(time.Hour)
	f("capped at burst", allowed(src, 100), 20)

	// IPv4-mapped is the same source as IPv4.
	f("mapped shares bucket", allowed(netip.AddrFrom16(src.As16()), 5), 0)
	// One /64 is one source; another /64 is another.
	a := netip.MustParseAddr("2001:db8:1:2::1")
	b := netip.MustParseAddr("2001:db8:1:2:ffff::9")
	c := netip.MustParseAddr("2001:db8:1:3::1")
	f("v6 burst", allowed(a, 30), 20)
	f("same /64", allowed(b, 5), 0)
	f("other /64", allowed(c, 30), 20)
}

func TestRateLimiterBoundedMemory(t *testing.T) {
	l := newRateLimiter(10, 2)
	now := int64(time.Hour)
	// Far more sources than slots: every new source gets at most its burst,
	// nothing grows, nothing panics. Sources come in rounds of one per slot
	// until no slot is empty (the hash is seeded per process, so how many
	// rounds that takes varies; a slot left empty would give the source
	// below a fresh bucket).
	empty := func() int {
		n := 0
		for i := range l.shards {
			for j := range l.shards[i].slots {
				if l.shards[i].slots[j].key == 0 {
					n++
				}
			}
		}
		return n
	}
	const round = limiterShards * limiterSlots
	for r := 0; empty() > 0; r++ {
		if r == 16 {
			t.Fatalf("%d slots still empty after %d sources", empty(), r*round)
		}
		for i := r * round; i < (r+1)*round; i++ {
			a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
			l.Allow(a, now)
		}
	}
	src := netip.MustParseAddr("203.0.113.5")
	allowed := func() int {
		n := 0
		for i := 0; i < 10; i++ {
			if l.Allow(src, now) {
				n++
			}
		}
		return n
	}
	// Every slot holds a partly spent bucket: a new source gets nothing
	// rather than a slot whose owner would come back to a fresh burst.
	if n := allowed(); n != 0 {
		t.Fatalf("%d allowed while every slot holds a spent bucket, want 0", n)
	}
	// Once the buckets have refilled (burst / rate), their slots are free.
	now += int64(200 * time.Millisecond)
	if n := allowed(); n != 2 {
		t.Fatalf("%d allowed after the churn refilled, want 2", n)
	}
	if allocs := testing.AllocsPerRun(100, func() { l.Allow(src, now) }); allocs != 0 {
		t.Fatalf("Allow allocates %v", allocs)
	}
}

// A source whose bucket was evicted by a churn of other sources must not
// come back with a fresh burst: cycling sources through the table never
// grants one source more than its burst plus the rate.
func TestRateLimiterEvictionGrantsNoFreshBurst(t *testing.T) {
	const rate, burst = 10, 20
	l := newRateLimiter(rate, burst)
	victim := netip.MustParseAddr("192.0.2.77")
	now := int64(time.Hour)
	churn := func(round int) {
		for i := range limiterShards * limiterSlots * 2 {
			l.Allow(netip.AddrFrom4([4]byte{byte(10 + round), byte(i >> 16), byte(i >> 8), byte(i)}), now)
		}
	}
	drain := func() int {
		n := 0
		for range 3 * burst {
			if l.Allow(victim, now) {
				n++
			}
		}
		return n
	}
	total := 0
	for round := range 4 {
		total += drain()
		churn(round)
	}
	if total != burst {
		t.Fatalf("%d answers to one source across 4 churns at one instant, want the burst %d", total, burst)
	}
	// Time refills the bucket at the configured rate, churn or not.
	now += int64(time.Second)
	churn(5)
	if n := drain(); n != rate {
		t.Fatalf("%d answers one second later, want the rate %d", n, rate)
	}
}
