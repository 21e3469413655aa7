package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestUnauthenticatedAnswersNoLarger: the smallest request of every kind that
// is answered without integrity (plain Binding, 401, 420) is answered — so the
// bound is not met by staying silent — with at most 32 bytes more than it, from
// an IPv4 and from an IPv6 source (whose XOR-MAPPED-ADDRESS is the larger), and
// changes nothing in the store (docs/contracts/udp.md#answers-and-their-sizes).
// A spoofed source can therefore reflect at most request+32 bytes per datagram
// at its victim, and errors only at the per-source rate
// (TestUnsignedErrorsRateLimited).
func TestUnauthenticatedAnswersNoLarger(t *testing.T) {
	pf := newProcFixture(t)
	pf.proc.limiter = newRateLimiter(1e9, 1<<20) // every error answered, so every size is checked
	v, pc := pf.listing()
	before := pf.store.Snapshot()
	build := func(attrs ...func(*stun.Builder)) []byte {
		b := stun.NewBuilder(make([]byte, 0, 256), stun.BindingRequest, newTx())
		for _, a := range attrs {
			a(&b)
		}
		if b.Err() != nil {
			t.Fatal(b.Err())
		}
		return append([]byte(nil), b.Bytes()...)
	}
	username := func(u string) func(*stun.Builder) { return func(b *stun.Builder) { b.AddUsername([]byte(u)) } }
	unknown := func(n int) func(*stun.Builder) {
		return func(b *stun.Builder) {
			for i := range n {
				b.AddBytes(uint16(0x0030+i), nil) // comprehension-required, unknown
			}
		}
	}
	fp := func(b *stun.Builder) { b.AddFingerprint() }
	bad := pc
	bad[0] ^= 1
	pu := stun.Username(stun.KindPresence, v.Presence)
	forged := func(b *stun.Builder) { b.AddUsername(pu[:]); b.AddIntegritySHA256(bad[:]) }
	cases := []struct {
		name string
		req  []byte
		code int // 0: a success
	}{
		{"plain Binding, 20 bytes", build(), 0},
		{"plain Binding with FINGERPRINT", build(fp), 0},
		{"one-byte USERNAME", build(username("x")), stun.CodeUnauthorized},
		{"empty USERNAME", build(username("")), stun.CodeUnauthorized},
		{"well-formed USERNAME without integrity", build(username(string(pu[:]))), stun.CodeUnauthorized},
		{"forged integrity", build(forged, fp), stun.CodeUnauthorized},
		{"unknown comprehension-required attribute", build(unknown(1)), stun.CodeUnknownAttribute},
		{"sixteen unknown attributes", build(unknown(16)), stun.CodeUnknownAttribute},
	}
	for _, src := range []netip.AddrPort{netip.MustParseAddrPort("198.51.100.7:4000"), netip.MustParseAddrPort("[2001:db8::7]:4000")} {
		for _, c := range cases {
			out := pf.feed(src, c.req)
			if len(out) != 1 {
				t.Fatalf("%s from %v: %d answers, want 1", c.name, src, len(out))
			}
			var m stun.Message
			if err := stun.Parse(out[0].buf, &m); err != nil {
				t.Fatalf("%s: unparseable answer: %v", c.name, err)
			}
			code, _, _ := m.ErrorCode()
			if (c.code == 0) != (m.Type() == stun.BindingSuccess) || code != c.code || m.HasIntegrity() || !m.HasFingerprint() {
				t.Fatalf("%s from %v: type %#x code %d integrity %v, want code %d unsigned with FINGERPRINT",
					c.name, src, m.Type(), code, m.HasIntegrity(), c.code)
			}
			if len(out[0].buf) > len(c.req)+stun.MaxUnsignedGrowth {
				t.Fatalf("%s from %v: %d-byte answer to a %d-byte request", c.name, src, len(out[0].buf), len(c.req))
			}
		}
	}
	if pf.store.Snapshot() != before {
		t.Fatal("unauthenticated requests changed the store")
	}
}
