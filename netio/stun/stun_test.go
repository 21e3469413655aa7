package stun

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

var testTx = [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func TestMessageTypeRoundTrip(t *testing.T) {
	f := func(method, class, want uint16) {
		t.Helper()
		got := MessageType(method, class)
		if got != want {
			t.Fatalf("MessageType(%#x, %#x) = %#x, want %#x", method, class, got, want)
		}
		if Method(got) != method || Class(got) != class {
			t.Fatalf("Method/Class(%#x) = %#x/%#x", got, Method(got), Class(got))
		}
	}
	f(MethodBinding, ClassRequest, 0x0001)
	f(MethodBinding, ClassSuccess, 0x0101)
	f(MethodBinding, ClassError, 0x0111)
	f(MethodBinding, ClassIndication, 0x0011)
	f(MethodOffer, ClassIndication, 0x02F1)
	f(MethodIntroduce, ClassIndication, 0x02F2)
}

func TestBuildParseRoundTrip(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	a1 := engine.Handle{UUID: engine.NewUUID()}
	a2 := engine.Handle{UUID: engine.NewUUID()}
	v4 := netip.MustParseAddrPort("203.0.113.10:40000")
	v6 := netip.MustParseAddrPort("[2001:db8::1]:3478")
	u := Username(KindPresence, h)

	buf := make([]byte, 0, 600)
	b := NewBuilder(buf, BindingSuccess, testTx)
	b.AddUsername(u[:])
	b.AddXORAddress(AttrXORMappedAddress, v4)
	b.AddXORAddress(AttrXORPeerAddress, v6)
	b.AddXORAddress(AttrLocalAddress, netip.AddrPortFrom(netip.AddrFrom16(v4.Addr().As16()), 9))
	b.AddUint64(AttrSequence, 1<<40+5)
	b.AddUint32(AttrLifetime, 19)
	b.AddAttempt(a1)
	b.AddAttempt(a2)
	b.AddErrorCode(409, "Conflict")
	b.AddIntegritySHA256(key)
	b.AddFingerprint()
	raw := b.Bytes()
	if raw == nil {
		t.Fatalf("build: %v", b.Err())
	}
	var m Message
	if err := Parse(raw, &m); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if m.Type() != BindingSuccess || m.TransactionID() != testTx {
		t.Fatalf("type %#x tx %v", m.Type(), m.TransactionID())
	}
	if got, ok := m.Username(); !ok || !bytes.Equal(got, u[:]) {
		t.Fatalf("username %q", got)
	}
	kind, gh, ok := ParseUsername(u[:])
	if !ok || kind != KindPresence || gh != h {
		t.Fatalf("ParseUsername: %c %v %v", kind, gh, ok)
	}
	if got, ok := m.XORAddress(AttrXORMappedAddress); !ok || got != v4 {
		t.Fatalf("mapped %v", got)
	}
	if got, ok := m.XORAddress(AttrXORPeerAddress); !ok || got != v6 {
		t.Fatalf("peer %v", got)
	}
	if got, ok := m.XORAddress(AttrLocalAddress); !ok || got != netip.AddrPortFrom(v4.Addr(), 9) {
		t.Fatalf("local %v (mapped address must come back unmapped)", got)
	}
	if got, ok := m.Uint64(AttrSequence); !ok || got != 1<<40+5 {
		t.Fatalf("seq %v", got)
	}
	if got, ok := m.Uint32(AttrLifetime); !ok || got != 19 {
		t.Fatalf("lifetime %v", got)
	}
	var hs []engine.Handle
	for a := range m.Attempts() {
		hs = append(hs, a)
	}
	if len(hs) != 2 || hs[0] != a1 || hs[1] != a2 || m.NumAttempts() != 2 {
		t.Fatalf("attempts %v", hs)
	}
	if code, reason, ok := m.ErrorCode(); !ok || code != 409 || string(reason) != "Conflict" {
		t.Fatalf("error code %d %q", code, reason)
	}
	if !m.HasFingerprint() || !m.HasIntegrity() || !m.CheckIntegrity(key) {
		t.Fatal("integrity or fingerprint")
	}
	if m.CheckIntegrity(bytes.Repeat([]byte{8}, 32)) {
		t.Fatal("wrong key verified")
	}
}

func TestUsernameRejects(t *testing.T) {
	h := engine.Handle{UUID: engine.NewUUID()}
	good := Username(KindAttemptClient, h)
	f := func(s string) {
		t.Helper()
		if _, _, ok := ParseUsername([]byte(s)); ok {
			t.Fatalf("ParseUsername(%q) accepted", s)
		}
	}
	f("")
	f("x:" + h.String())
	f("p;" + h.String())
	f("p:" + h.String()[:35])
	f("p:" + h.String() + "0")
	f("P:" + h.String())
	f(string(good[:2]) + "ABCDEF00-0000-4000-8000-000000000000")
	f("p:abcdef00+0000-4000-8000-000000000000")
	if _, _, ok := ParseUsername(good[:]); !ok {
		t.Fatal("good username rejected")
	}
}

// build returns a message with the given attributes, optionally signed and
// fingerprinted.
func build(t *testing.T, typ uint16, key []byte, fp bool, attrs ...func(*Builder)) []byte {
	t.Helper()
	b := NewBuilder(make([]byte, 0, 1500), typ, testTx)
	for _, a := range attrs {
		a(&b)
	}
	if key != nil {
		b.AddIntegritySHA256(key)
	}
	if fp {
		b.AddFingerprint()
	}
	if b.Err() != nil {
		t.Fatalf("build: %v", b.Err())
	}
	return b.Bytes()
}

func TestParseMalformed(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	user := func(b *Builder) { b.AddUsername([]byte("p:00000000-0000-4000-8000-000000000000")) }
	good := build(t, BindingRequest, key, true, user)
	f := func(name string, b []byte, want error) {
		t.Helper()
		var m Message
		before := append([]byte(nil), b...)
		if err := Parse(b, &m); !errors.Is(err, want) {
			t.Fatalf("%s: Parse = %v, want %v", name, err, want)
		}
		if !bytes.Equal(before, b) {
			t.Fatalf("%s: Parse modified its input", name)
		}
	}
	mod := func(i int, v byte) []byte { c := append([]byte(nil), good...); c[i] = v; return c }
	f("empty", nil, ErrTooShort)
	f("short", good[:19], ErrTooShort)
	f("too long", make([]byte, MaxDatagram+4), ErrTooLong)
	f("top bits", mod(0, 0x40), ErrNotSTUN)
	f("cookie", mod(4, 0x22), ErrNotSTUN)
	f("length not multiple of 4", mod(3, good[3]+1), ErrLength)
	f("length mismatch", mod(3, good[3]+4), ErrLength)
	f("truncated", good[:len(good)-4], ErrLength)
	f("bad fingerprint", mod(len(good)-1, good[len(good)-1]^1), ErrFingerprint)
	f("changed body", mod(30, good[30]^1), ErrFingerprint)

	overrun := append([]byte(nil), good[:HeaderSize]...)
	overrun = append(overrun, 0x80, 0x22, 0x00, 0x08, 'a', 'b', 'c', 'd')
	binary.BigEndian.PutUint16(overrun[2:], 8)
	f("attribute overrun", overrun, ErrAttrOverrun)

	after := build(t, BindingRequest, nil, true)
	after = append(after, 0x80, 0x22, 0, 0)
	binary.BigEndian.PutUint16(after[2:], uint16(len(after)-HeaderSize))
	f("attribute after fingerprint", after, ErrAfterFingerprint)

	f("duplicate username", build(t, BindingRequest, nil, false, user, user), ErrDuplicate)
	dupMI := build(t, BindingRequest, key, false, user)
	dupMI = append(dupMI, dupMI[len(dupMI)-36:]...)
	binary.BigEndian.PutUint16(dupMI[2:], uint16(len(dupMI)-HeaderSize))
	f("duplicate integrity", dupMI, ErrDuplicate)
	f("short integrity", build(t, BindingRequest, nil, false, func(b *Builder) { b.AddBytes(AttrIntegritySHA256, make([]byte, 16)) }), ErrAttrValue)

	many := func(b *Builder) {
		for i := 0; i < maxAttrs+1; i++ {
			b.AddUint32(AttrLifetime, 1)
		}
	}
	f("too many attributes", build(t, BindingRequest, nil, false, many), ErrTooManyAttrs)

	var m Message
	if err := Parse(good, &m); err != nil {
		t.Fatalf("good: %v", err)
	}
}

func TestParseUnknownAndIgnored(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	raw := build(t, BindingRequest, key, true,
		func(b *Builder) { b.AddBytes(0x7777, []byte{1}) },    // unknown required
		func(b *Builder) { b.AddBytes(0xC0FF, []byte{1, 2}) }, // unknown optional: ignored
		func(b *Builder) { b.AddBytes(0x0003, nil) },          // unknown required
	)
	var m Message
	if err := Parse(raw, &m); err != nil {
		t.Fatal(err)
	}
	if u := m.Unknown(); len(u) != 2 || u[0] != 0x7777 || u[1] != 0x0003 {
		t.Fatalf("unknown = %#x", u)
	}
	// Attributes after the integrity attribute are ignored (not unknown, not recorded).
	b := NewBuilder(make([]byte, 0, 200), BindingRequest, testTx)
	b.AddIntegritySHA256(key)
	b.AddBytes(0x7777, []byte{1})
	b.AddUint32(AttrLifetime, 5)
	b.AddFingerprint()
	if err := Parse(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Unknown()) != 0 || m.Has(AttrLifetime) {
		t.Fatal("attributes after integrity were not ignored")
	}
}

func TestBuilderBounds(t *testing.T) {
	b := NewBuilder(make([]byte, 0, 30), BindingRequest, testTx)
	b.AddUint32(AttrLifetime, 1)
	if b.Err() != nil {
		t.Fatal(b.Err())
	}
	b.AddUint64(AttrSequence, 1)
	if b.Err() != ErrBufferFull || b.Bytes() != nil {
		t.Fatalf("overflow not reported: %v", b.Err())
	}
	b = NewBuilder(make([]byte, 0, 10), BindingRequest, testTx)
	if b.Err() != ErrBufferFull {
		t.Fatal("tiny buffer accepted")
	}
	b = NewBuilder(make([]byte, 0, 100), BindingRequest, testTx)
	b.AddXORAddress(AttrXORMappedAddress, netip.AddrPort{})
	if b.Err() != ErrBadValue {
		t.Fatal("invalid endpoint accepted")
	}
	b = NewBuilder(make([]byte, 0, 100), BindingRequest, testTx)
	b.AddErrorCode(200, "x")
	if b.Err() != ErrBadValue {
		t.Fatal("bad code accepted")
	}
}

func TestZeroAllocs(t *testing.T) {
	key := bytes.Repeat([]byte{1}, 32)
	h := engine.Handle{UUID: engine.NewUUID()}
	buf := make([]byte, 0, 600)
	src := netip.MustParseAddrPort("[2001:db8::2]:5000")
	var m Message
	allocs := testing.AllocsPerRun(200, func() {
		u := Username(KindPresence, h)
		b := NewBuilder(buf, BindingRequest, testTx)
		b.AddUsername(u[:])
		b.AddUint64(AttrSequence, 9)
		b.AddXORAddress(AttrLocalAddress, src)
		b.AddXORAddress(AttrRelayedAddress, src)
		b.AddOutcome(PathRelayed, 900)
		b.AddIntegritySHA256(key)
		b.AddFingerprint()
		if err := Parse(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		name, _ := m.Username()
		if _, _, ok := ParseUsername(name); !ok || !m.CheckIntegrity(key) {
			t.Fatal("round trip failed")
		}
		for a := range m.Attempts() {
			Sink += int(a.UUID[0])
		}
		if ap, ok := m.XORAddress(AttrLocalAddress); !ok || ap != src {
			t.Fatal("address")
		}
		if ap, ok := m.XORAddress(AttrRelayedAddress); !ok || ap != src {
			t.Fatal("relayed address")
		}
		if p, ms, ok := m.Outcome(); !ok || p != PathRelayed || ms != 900 {
			t.Fatal("outcome")
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per encode+parse+verify, want 0", allocs)
	}
}

// TestIntegrityRefusals: a key over 64 bytes, or a message already past
// MaxDatagram, gets no MESSAGE-INTEGRITY-SHA256 and a typed error, writes
// nothing, and the first error is the one kept.
func TestIntegrityRefusals(t *testing.T) {
	h := engine.NewHMAC()
	pads := new(engine.HMACKey)
	h.SetKey(pads, bytes.Repeat([]byte{3}, 32))
	f := func(name string, prefill int, sign func(*Builder), want error) {
		t.Helper()
		b := NewBuilder(make([]byte, 0, 2*MaxDatagram), BindingSuccess, testTx)
		if prefill > 0 {
			b.AddBytes(AttrUsername, make([]byte, prefill))
		}
		n := b.Len()
		sign(&b)
		if b.Err() != want || b.Len() != n || b.Bytes() != nil {
			t.Fatalf("%s: err %v, %d bytes (had %d), want %v and nothing written", name, b.Err(), b.Len(), n, want)
		}
		b.AddErrorCode(200, "x") // a later refusal does not replace the first
		if b.Err() != want {
			t.Fatalf("%s: first error replaced by %v", name, b.Err())
		}
	}
	long := bytes.Repeat([]byte{1}, 65)
	f("65-byte key", 0, func(b *Builder) { b.AddIntegritySHA256(long) }, ErrBadValue)
	over := MaxDatagram // 20-byte header + 4-byte attribute header + this: past MaxDatagram
	f("past MaxDatagram", over, func(b *Builder) { b.AddIntegritySHA256(long[:32]) }, ErrBufferFull)
	f("past MaxDatagram, pads", over, func(b *Builder) { b.AddIntegrityWith(h, pads) }, ErrBufferFull)
}
