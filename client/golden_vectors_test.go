package client

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// goldenPath is the C library's copy of every message kind the UDP contract
// has, written from this SDK's encoders and the server's codec (netio/stun).
// The C tests (sdk/c/tests/test_golden.c) rebuild each one from its script
// and must get the same bytes, then parse the bytes and get the script's
// values back. RDV_UPDATE_GOLDEN=1 rewrites the file; otherwise the test
// fails when the committed file differs from what the Go code writes now,
// so a codec change cannot leave the C library checking stale bytes.
var goldenPath = filepath.Join("..", "sdk", "c", "testdata", "golden.txt")

// golden records a script line by line while building the same message
// with stun.Builder.
type golden struct {
	out *bytes.Buffer
	b   stun.Builder
	buf [stun.MaxDatagram]byte
}

func (g *golden) start(name string, typ uint16, tx [12]byte) {
	fmt.Fprintf(g.out, "vector %s\ntype %04x\ntxid %x\n", name, typ, tx)
	g.b = stun.NewBuilder(g.buf[:0], typ, tx)
}

func (g *golden) username(kind byte, h engine.Handle) {
	u := stun.Username(kind, h)
	g.b.AddUsername(u[:])
	fmt.Fprintf(g.out, "username %c %s\n", kind, h.UUID)
}

func (g *golden) u64(t uint16, v uint64) {
	g.b.AddUint64(t, v)
	fmt.Fprintf(g.out, "u64 %04x %d\n", t, v)
}

func (g *golden) u32(t uint16, v uint32) {
	g.b.AddUint32(t, v)
	fmt.Fprintf(g.out, "u32 %04x %d\n", t, v)
}

func (g *golden) xaddr(t uint16, ap netip.AddrPort) {
	g.b.AddXORAddress(t, ap)
	fmt.Fprintf(g.out, "xaddr %04x %s\n", t, ap)
}

func (g *golden) attempt(h engine.Handle) {
	g.b.AddAttempt(h)
	fmt.Fprintf(g.out, "attempt %s\n", h.UUID)
}

func (g *golden) empty(t uint16) {
	g.b.AddBytes(t, nil)
	fmt.Fprintf(g.out, "empty %04x\n", t)
}

func (g *golden) outcome(path byte, ms uint32) {
	g.b.AddOutcome(path, ms)
	fmt.Fprintf(g.out, "outcome %d %d\n", path, ms)
}

func (g *golden) errorCode(code int, reason string) {
	g.b.AddErrorCode(code, reason)
	fmt.Fprintf(g.out, "error %d %s\n", code, reason)
}

func (g *golden) unknown(types ...uint16) {
	g.b.AddUnknownAttributes(types)
	s := make([]string, len(types))
	for i, t := range types {
		s[i] = fmt.Sprintf("%04x", t)
	}
	fmt.Fprintf(g.out, "unknown %s\n", strings.Join(s, ","))
}

// integrity names the key as the REST API gives it (base64url) so the C
// side parses it as a game would; a derived host key is given in hex.
func (g *golden) integrity(key *engine.Capability) {
	g.b.AddIntegritySHA256(key[:])
	fmt.Fprintf(g.out, "integrity %x\n", key[:])
}

// end finishes the message, checks it against want (the SDK's own encoder's
// bytes) when given, and writes the bytes.
func (g *golden) end(t *testing.T, fingerprint bool, want []byte) {
	t.Helper()
	if fingerprint {
		g.b.AddFingerprint()
		fmt.Fprintf(g.out, "fingerprint\n")
	}
	msg := g.b.Bytes()
	if msg == nil {
		t.Fatalf("builder: %v", g.b.Err())
	}
	if want != nil && !bytes.Equal(msg, want) {
		t.Fatalf("script differs from the SDK's encoder:\n%x\n%x", msg, want)
	}
	var m stun.Message
	if err := stun.Parse(msg, &m); err != nil {
		t.Fatalf("the server's parser rejects a vector: %v", err)
	}
	fmt.Fprintf(g.out, "bytes %x\nend\n\n", msg)
}

func goldenHandle(label string) engine.Handle {
	s := sha256.Sum256([]byte(label))
	var u engine.UUID
	copy(u[:], s[:16])
	u[6] = u[6]&0x0F | 0x40 // version 4
	u[8] = u[8]&0x3F | 0x80 // variant
	return engine.Handle{UUID: u}
}

func goldenCap(label string) engine.Capability {
	return engine.Capability(sha256.Sum256([]byte("cap:" + label)))
}

func goldenTx(label string) (tx [12]byte) {
	s := sha256.Sum256([]byte("tx:" + label))
	copy(tx[:], s[:12])
	return tx
}

// goldenIndicationTx is the mediator's transaction ID of an indication
// (docs/contracts/udp.md, INTRODUCE): handle bytes 4-15, first byte XOR the
// recipient kind, and XOR 0x80 for RELAY-INTRODUCE.
func goldenIndicationTx(kind byte, h engine.Handle, relay bool) (tx [12]byte) {
	copy(tx[:], h.UUID[4:16])
	tx[0] ^= kind
	if relay {
		tx[0] ^= 0x80
	}
	return tx
}

func writeGolden(t *testing.T) []byte {
	var out bytes.Buffer
	out.WriteString("# Golden STUN vectors for the C library, written by client/golden_vectors_test.go\n" +
		"# (RDV_UPDATE_GOLDEN=1 go test -run TestGoldenVectors ./client/). Do not edit.\n\n")
	g := &golden{out: &out}
	pres := goldenHandle("presence")
	presCap := goldenCap("presence")
	att := goldenHandle("attempt")
	clientCap := goldenCap("client")
	hostCap := engine.HostAttemptCapability(&presCap, att)
	v4 := netip.MustParseAddrPort("192.0.2.10:40000")
	v4b := netip.MustParseAddrPort("198.51.100.7:3478")
	lan4 := netip.MustParseAddrPort("10.0.0.5:50001")
	v6 := netip.MustParseAddrPort("[2001:db8::1:2]:40001")
	lan6 := netip.MustParseAddrPort("[fd00::5]:50002")
	relay4 := netip.MustParseAddrPort("203.0.113.9:49152")
	relay6 := netip.MustParseAddrPort("[2001:db8:ffff::9]:65535")

	// The capabilities as the REST API hands them out, and the host key the
	// host derives from its presence capability.
	fmt.Fprintf(&out, "capability presence %s %x\n", base64.RawURLEncoding.EncodeToString(presCap[:]), presCap[:])
	fmt.Fprintf(&out, "capability client %s %x\n", base64.RawURLEncoding.EncodeToString(clientCap[:]), clientCap[:])
	fmt.Fprintf(&out, "hostkey %x %s %x\n\n", presCap[:], att.UUID, hostCap[:])

	// Presence refreshes, as the SDK's appendPresence writes them: edge
	// sequences (1, byte and 32-bit boundaries, the 2^53-1 ceiling), with
	// and without a LAN address of each family.
	var sdk [stun.MaxDatagram]byte
	for i, c := range []struct {
		seq   uint64
		local netip.AddrPort
	}{
		{1, lan4}, {255, lan4}, {256, netip.AddrPort{}}, {1 << 32, lan6}, {1<<53 - 1, lan4}, {2, lan6},
	} {
		tx := goldenTx(fmt.Sprint("presence", i))
		g.start(fmt.Sprintf("presence_refresh_%d", i), stun.BindingRequest, tx)
		g.username(stun.KindPresence, pres)
		g.u64(stun.AttrSequence, c.seq)
		if c.local.IsValid() {
			g.xaddr(stun.AttrLocalAddress, c.local)
		}
		g.integrity(&presCap)
		g.end(t, true, appendPresence(sdk[:0], tx, pres, &presCap, c.seq, c.local))
	}

	// Attempt binds of both roles, as appendBind writes them.
	for i, c := range []struct {
		kind           byte
		local, relayed netip.AddrPort
	}{
		{stun.KindAttemptHost, lan4, netip.AddrPort{}},
		{stun.KindAttemptClient, lan4, netip.AddrPort{}},
		{stun.KindAttemptHost, lan6, netip.AddrPort{}},
		{stun.KindAttemptClient, netip.AddrPort{}, netip.AddrPort{}},
		{stun.KindAttemptHost, lan4, relay4},
		{stun.KindAttemptClient, netip.AddrPort{}, relay6},
		{stun.KindAttemptHost, netip.AddrPort{}, relay4},
	} {
		key := &clientCap
		if c.kind == stun.KindAttemptHost {
			key = &hostCap
		}
		tx := goldenTx(fmt.Sprint("bind", i))
		g.start(fmt.Sprintf("bind_%c_%d", c.kind, i), stun.BindingRequest, tx)
		g.username(c.kind, att)
		if c.local.IsValid() {
			g.xaddr(stun.AttrLocalAddress, c.local)
		}
		if c.relayed.IsValid() {
			g.xaddr(stun.AttrRelayedAddress, c.relayed)
		}
		g.integrity(key)
		g.end(t, true, appendBind(sdk[:0], tx, c.kind, att, key, c.local, c.relayed))
	}

	// Outcome reports: each path, both roles, the millisecond extremes.
	for i, c := range []struct {
		kind byte
		path byte
		ms   uint32
	}{
		{stun.KindAttemptHost, stun.PathDirect, 0}, {stun.KindAttemptClient, stun.PathDirect, 1234},
		{stun.KindAttemptHost, stun.PathRelayed, 60000}, {stun.KindAttemptClient, stun.PathFailed, 1<<32 - 1},
	} {
		key := &clientCap
		if c.kind == stun.KindAttemptHost {
			key = &hostCap
		}
		g.start(fmt.Sprintf("outcome_%c_%d", c.kind, i), stun.BindingRequest, goldenTx(fmt.Sprint("outcome", i)))
		g.username(c.kind, att)
		g.outcome(c.path, c.ms)
		g.integrity(key)
		g.end(t, true, nil)
	}

	// The mediator's answers.
	g.start("plain_binding_request", stun.BindingRequest, goldenTx("plain"))
	g.end(t, true, nil)
	g.start("plain_binding_success_v4", stun.BindingSuccess, goldenTx("plain"))
	g.xaddr(stun.AttrXORMappedAddress, v4)
	g.end(t, true, nil)
	g.start("plain_binding_success_v6", stun.BindingSuccess, goldenTx("plain6"))
	g.xaddr(stun.AttrXORMappedAddress, v6)
	g.end(t, true, nil)
	for n := 0; n <= 4; n++ {
		g.start(fmt.Sprintf("presence_success_%d_attempts", n), stun.BindingSuccess, goldenTx(fmt.Sprint("ps", n)))
		if n%2 == 0 {
			g.xaddr(stun.AttrXORMappedAddress, v4)
		} else {
			g.xaddr(stun.AttrXORMappedAddress, v6)
		}
		g.u32(stun.AttrLifetime, 20)
		for k := range n {
			g.attempt(goldenHandle(fmt.Sprint("pending", k)))
		}
		g.integrity(&presCap)
		g.end(t, true, nil)
	}
	for i, relayOnly := range []bool{false, true} {
		for _, kind := range []byte{stun.KindAttemptHost, stun.KindAttemptClient} {
			key := &clientCap
			if kind == stun.KindAttemptHost {
				key = &hostCap
			}
			g.start(fmt.Sprintf("bind_success_%c_%d", kind, i), stun.BindingSuccess, goldenTx(fmt.Sprint("bs", kind, i)))
			g.xaddr(stun.AttrXORMappedAddress, v4b)
			g.u32(stun.AttrLifetime, 59)
			if relayOnly {
				g.empty(stun.AttrRelayOnly)
			}
			g.integrity(key)
			g.end(t, true, nil)
		}
	}
	for _, c := range []struct {
		code   int
		reason string
		key    *engine.Capability
	}{
		{400, "Bad Request", &presCap}, {403, "Forbidden", &clientCap}, {404, "Not Found", &presCap},
		{409, "Conflict", &hostCap}, {503, "Unavailable", &clientCap}, {508, "Capacity", &presCap},
		{401, "Unauthorized", nil},
	} {
		g.start(fmt.Sprintf("error_%d", c.code), stun.BindingError, goldenTx(fmt.Sprint("err", c.code)))
		g.errorCode(c.code, c.reason)
		if c.key != nil {
			g.integrity(c.key)
		}
		g.end(t, true, nil)
	}
	g.start("error_420_signed", stun.BindingError, goldenTx("e420"))
	g.errorCode(420, "Unknown")
	g.unknown(0x0042, 0x7FFF, 0x0003)
	g.integrity(&presCap)
	g.end(t, true, nil)
	g.start("error_420_unsigned", stun.BindingError, goldenTx("e420u"))
	g.errorCode(420, "Unknown")
	g.unknown(0x0042)
	g.end(t, true, nil)

	// The mediator's indications, with its transaction IDs.
	for i, lifetime := range []uint32{60, 0} {
		g.start(fmt.Sprint("offer_", i), stun.OfferIndication, goldenIndicationTx(stun.KindPresence, att, false))
		g.username(stun.KindPresence, pres)
		g.attempt(att)
		g.u32(stun.AttrLifetime, lifetime)
		g.integrity(&presCap)
		g.end(t, true, nil)
	}
	for i, c := range []struct {
		kind        byte
		peer, local netip.AddrPort
	}{
		{stun.KindAttemptHost, v4, lan4}, {stun.KindAttemptClient, v4b, netip.AddrPort{}},
		{stun.KindAttemptHost, v6, lan6}, {stun.KindAttemptClient, v6, lan4},
	} {
		key := &clientCap
		if c.kind == stun.KindAttemptHost {
			key = &hostCap
		}
		g.start(fmt.Sprintf("introduce_%c_%d", c.kind, i), stun.IntroduceIndication, goldenIndicationTx(c.kind, att, false))
		g.username(c.kind, att)
		g.xaddr(stun.AttrXORPeerAddress, c.peer)
		if c.local.IsValid() {
			g.xaddr(stun.AttrPeerLocalAddress, c.local)
		}
		g.integrity(key)
		g.end(t, true, nil)
	}
	for i, c := range []struct {
		kind    byte
		relayed netip.AddrPort
	}{
		{stun.KindAttemptHost, relay4}, {stun.KindAttemptClient, relay4}, {stun.KindAttemptHost, relay6},
	} {
		key := &clientCap
		if c.kind == stun.KindAttemptHost {
			key = &hostCap
		}
		g.start(fmt.Sprintf("relay_introduce_%c_%d", c.kind, i), stun.RelayIntroduceIndication, goldenIndicationTx(c.kind, att, true))
		g.username(c.kind, att)
		g.xaddr(stun.AttrXORPeerAddress, c.relayed)
		g.integrity(key)
		g.end(t, true, nil)
	}
	return out.Bytes()
}

func TestGoldenVectors(t *testing.T) {
	got := writeGolden(t)
	if os.Getenv("RDV_UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(goldenPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatalf("%v (RDV_UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: the Go codec writes other bytes now; rerun with RDV_UPDATE_GOLDEN=1 and run make c-test", goldenPath)
	}
}

// BenchmarkParseVerifyIntroduce is the Go side of the C library's
// introduce_parse_verify figure (sdk/c/bench): an INTRODUCE with both peer
// addresses parsed, its USERNAME and integrity checked, the peer decoded.
func BenchmarkParseVerifyIntroduce(b *testing.B) {
	h := goldenHandle("bench")
	key := goldenCap("bench")
	var buf [stun.MaxDatagram]byte
	bl := stun.NewBuilder(buf[:0], stun.IntroduceIndication, goldenIndicationTx(stun.KindAttemptClient, h, false))
	u := stun.Username(stun.KindAttemptClient, h)
	bl.AddUsername(u[:])
	bl.AddXORAddress(stun.AttrXORPeerAddress, netip.MustParseAddrPort("198.51.100.7:40000"))
	bl.AddXORAddress(stun.AttrPeerLocalAddress, netip.MustParseAddrPort("10.0.0.7:6000"))
	bl.AddIntegritySHA256(key[:])
	bl.AddFingerprint()
	raw := bl.Bytes()
	var m stun.Message
	b.ReportAllocs()
	for b.Loop() {
		if stun.Parse(raw, &m) != nil || !m.CheckIntegrity(key[:]) {
			b.Fatal("parse")
		}
		u, _ := m.Username()
		if _, _, ok := stun.ParseUsername(u); !ok {
			b.Fatal("username")
		}
		p, _ := m.XORAddress(stun.AttrXORPeerAddress)
		Sink += int(p.Port())
	}
}
