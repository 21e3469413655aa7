package netio

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// waitBound bounds every blocking read in these tests so a broken mediator
// fails the test instead of hanging it. It is never an assertion about speed.
const waitBound = 10 * time.Second

var testKey = [32]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

var testTenant = engine.Tenant{Game: "demo", Env: "dev"}

type fixture struct {
	t     testing.TB
	clock *engine.ManualClock
	keys  *engine.Keyring
	store *memstore.Store
	med   *Mediator
	set   *metrics.Set
	addr  netip.AddrPort
	n     int
}

// newStoreFixture is a fixture with its MemStore and no mediator yet.
func newStoreFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: engine.NewManualClock(), keys: engine.NewKeyring(testKey), set: metrics.NewSet()}
	st, err := memstore.New(engine.DefaultLimits(), f.clock, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	return f
}

func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	f := newStoreFixture(t)
	st := f.store
	if cfg.Addrs == nil {
		cfg.Addrs = []string{"127.0.0.1:0"}
	}
	if cfg.Sockets == 0 {
		cfg.Sockets = 2
	}
	cfg.Metrics = f.set
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := NewMediator(cfg, st, f.keys)
	if err != nil {
		t.Fatal(err)
	}
	f.med = m
	f.addr = m.LocalAddrs()[0]
	m.Start()
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := st.CheckInvariants(); err != nil {
			t.Errorf("store invariants: %v", err)
		}
	})
	return f
}

// wantMetrics requires the Prometheus text of set to hold every line of want
// (when says at which point of the test) and returns that text.
func wantMetrics(t *testing.T, set *metrics.Set, when string, want ...string) string {
	t.Helper()
	var out strings.Builder
	set.WritePrometheus(&out)
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Fatalf("metrics %s lack %q:\n%s", when, w, out.String())
		}
	}
	return out.String()
}

// mediatorOn starts another mediator, one socket, on st (a store over the
// fixture's keyring) and points the fixture's peers at it; it is closed at
// cleanup, before the fixture's own.
func (f *fixture) mediatorOn(st engine.Store) *Mediator {
	f.t.Helper()
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Logger: f.med.log}, st, f.keys)
	if err != nil {
		f.t.Fatal(err)
	}
	m.Start()
	f.t.Cleanup(func() { m.Close() })
	f.addr = m.LocalAddrs()[0]
	return m
}

// listing registers a listing and returns it with its presence capability.
func (f *fixture) listing() (engine.ListingView, engine.Capability) {
	f.t.Helper()
	f.n++
	v, r, err := f.store.CreateListing(context.Background(), engine.CreateListing{
		Tenant: testTenant, Owner: engine.Subject(fmt.Sprintf("pub-%d", f.n/50)), IdempotencyKey: fmt.Sprintf("l-%d", f.n),
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 7, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8},
		Doc: []byte("{}"),
	})
	if err != nil || !r.OK() {
		f.t.Fatalf("CreateListing: %v %v", r, err)
	}
	return v, f.keys.Presence(v.Presence)
}

// attempt creates a join attempt on v (its presence must be fresh).
func (f *fixture) attempt(v engine.ListingView) engine.AttemptView {
	f.t.Helper()
	f.n++
	a, r, err := f.store.CreateJoinAttempt(context.Background(), engine.CreateAttempt{
		Tenant: testTenant, Client: "cli-1", IdempotencyKey: fmt.Sprintf("a-%d", f.n),
		Listing: v.ID, ProtocolVersion: 7,
	})
	if err != nil || !r.OK() {
		f.t.Fatalf("CreateJoinAttempt: %v %v", r, err)
	}
	return a
}

// peer is a UDP socket on loopback talking to the mediator.
type peer struct {
	t    testing.TB
	conn *net.UDPConn
	to   netip.AddrPort
	buf  []byte
}

func (f *fixture) peer() *peer { return newPeer(f.t, f.addr) }

func newPeer(t testing.TB, to netip.AddrPort) *peer {
	t.Helper()
	local := "127.0.0.1:0"
	if to.Addr().Is6() {
		local = "[::1]:0"
	}
	return newPeerFrom(t, to, local)
}

// newPeerFrom binds the peer to local ("ip:port").
func newPeerFrom(t testing.TB, to netip.AddrPort, local string) *peer {
	t.Helper()
	network := "udp4"
	if to.Addr().Is6() {
		network = "udp6"
	}
	la, _ := net.ResolveUDPAddr(network, local)
	c, err := net.ListenUDP(network, la)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{t: t, conn: c, to: to, buf: make([]byte, 2048)}
}

func (p *peer) addr() netip.AddrPort {
	ap := p.conn.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

func (p *peer) send(b []byte) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(b, p.to); err != nil {
		p.t.Fatal(err)
	}
}

// recv returns the next datagram, parsed, and its source.
func (p *peer) recv() (*stun.Message, netip.AddrPort) {
	p.t.Helper()
	p.conn.SetReadDeadline(time.Now().Add(waitBound))
	n, from, err := p.conn.ReadFromUDPAddrPort(p.buf)
	if err != nil {
		p.t.Fatalf("no datagram within the test bound: %v", err)
	}
	raw := append([]byte(nil), p.buf[:n]...)
	m := new(stun.Message)
	if err := stun.Parse(raw, m); err != nil {
		p.t.Fatalf("answer does not parse: %v", err)
	}
	if !m.HasFingerprint() {
		p.t.Fatal("answer without FINGERPRINT")
	}
	return m, netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
}

// roundTrip sends req and returns the answer with req's transaction ID,
// failing on any other datagram in between.
func (p *peer) roundTrip(req []byte) *stun.Message {
	p.t.Helper()
	p.send(req)
	return p.expect(txOf(req))
}

func (p *peer) expect(tx [12]byte) *stun.Message {
	p.t.Helper()
	m, _ := p.recv()
	if m.TransactionID() != tx {
		p.t.Fatalf("unexpected datagram type %#x before the answer", m.Type())
	}
	return m
}

// barrier proves that everything sent before it got no answer: the mediator
// serves one source's datagrams in order on one socket, so when the plain
// Binding's answer is the next datagram, nothing was answered before it.
func (p *peer) barrier() {
	p.t.Helper()
	b := plainBinding(p.t)
	p.send(b)
	m, _ := p.recv()
	if m.TransactionID() != txOf(b) {
		p.t.Fatalf("got an answer (type %#x) where none was due", m.Type())
	}
}

func txOf(b []byte) (tx [12]byte) { copy(tx[:], b[8:20]); return tx }

func newTx() (tx [12]byte) { _, _ = rand.Read(tx[:]); return tx }

func plainBinding(t testing.TB) []byte {
	b := stun.NewBuilder(make([]byte, 0, 64), stun.BindingRequest, newTx())
	return b.Bytes()
}

// signedReq builds a signed Binding request with USERNAME kind:h.
func signedReq(kind byte, h engine.Handle, key []byte, attrs ...func(*stun.Builder)) []byte {
	u := stun.Username(kind, h)
	b := stun.NewBuilder(make([]byte, 0, 1500), stun.BindingRequest, newTx())
	b.AddUsername(u[:])
	for _, a := range attrs {
		a(&b)
	}
	if key != nil {
		b.AddIntegritySHA256(key)
	}
	b.AddFingerprint()
	if b.Err() != nil {
		panic(b.Err())
	}
	return b.Bytes()
}

func seq(n uint64) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddUint64(stun.AttrSequence, n) }
}

func localAddr(ap netip.AddrPort) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddXORAddress(stun.AttrLocalAddress, ap) }
}

// wantError checks an error answer's code and whether it is signed by key.
func wantError(t testing.TB, m *stun.Message, code int, key []byte) {
	t.Helper()
	if m.Type() != stun.BindingError {
		t.Fatalf("answer type %#x, want a Binding error %d", m.Type(), code)
	}
	got, _, ok := m.ErrorCode()
	if !ok || got != code {
		t.Fatalf("error %d, want %d", got, code)
	}
	if key == nil {
		if m.HasIntegrity() {
			t.Fatalf("%d is signed, want unsigned", code)
		}
	} else if !m.CheckIntegrity(key) {
		t.Fatalf("%d is not signed with the request's capability", code)
	}
	if m.Has(stun.AttrUsername) {
		t.Fatal("a response echoes USERNAME")
	}
	if len(m.Raw()) > stun.MaxSignedAnswer {
		t.Fatalf("answer of %d bytes", len(m.Raw()))
	}
}

func wantSuccess(t testing.TB, m *stun.Message, key []byte, mapped netip.AddrPort) {
	t.Helper()
	if m.Type() != stun.BindingSuccess {
		code, reason, _ := m.ErrorCode()
		t.Fatalf("answer type %#x (%d %s), want success", m.Type(), code, reason)
	}
	if key != nil && !m.CheckIntegrity(key) {
		t.Fatal("success not signed with the request's capability")
	}
	if got, ok := m.XORAddress(stun.AttrXORMappedAddress); !ok || got != mapped {
		t.Fatalf("XOR-MAPPED-ADDRESS %v, want %v", got, mapped)
	}
	if m.Has(stun.AttrUsername) {
		t.Fatal("a response echoes USERNAME")
	}
	if len(m.Raw()) > stun.MaxSignedAnswer {
		t.Fatalf("answer of %d bytes", len(m.Raw()))
	}
}

func ipv6Loopback() bool {
	c, err := net.ListenPacket("udp6", "[::1]:0")
	if err != nil {
		return false
	}
	c.Close()
	return true
}

var _ = bytes.Equal
var _ = errors.Is
var _ = os.Getenv
