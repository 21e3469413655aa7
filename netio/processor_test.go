package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// procFixture drives a processor directly, without sockets.
type procFixture struct {
	*fixture
	proc *processor
	in   []packet
	now  int64
	step int64 // nanoseconds the limiter's clock moves per batch
}

func newProcFixture(t testing.TB) *procFixture {
	f := newFixture(t, Config{Sockets: 1})
	pf := &procFixture{
		fixture: f,
		proc:    newProcessor(f.store, f.keys, newRateLimiter(10, 20), batchSize),
		in:      newPackets(batchSize, readSlot),
		step:    1e6,
	}
	pf.proc.punch, pf.proc.marks = f.med.punch, f.med.marks
	return pf
}

// feed runs one batch of datagrams from src and returns the answers.
func (pf *procFixture) feed(src netip.AddrPort, dgrams ...[]byte) []packet {
	for i, d := range dgrams {
		pf.in[i].buf = append(pf.in[i].buf[:0], d...)
		pf.in[i].addr, pf.in[i].local, pf.in[i].trunc = src, netip.Addr{}, false
	}
	pf.now += pf.step
	return pf.proc.run(pf.in[:len(dgrams)], pf.now)
}

// buildInto builds a signed request into buf without allocating.
func buildInto(buf []byte, kind byte, h engine.Handle, key *engine.Capability, sq uint64, tx [12]byte) []byte {
	u := stun.Username(kind, h)
	b := stun.NewBuilder(buf, stun.BindingRequest, tx)
	b.AddUsername(u[:])
	if sq > 0 {
		b.AddUint64(stun.AttrSequence, sq)
	}
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

// buildRelayed builds a signed attempt bind carrying RDV-RELAYED-ADDRESS.
func buildRelayed(buf []byte, kind byte, h engine.Handle, key *engine.Capability, relayed netip.AddrPort, tx [12]byte) []byte {
	u := stun.Username(kind, h)
	b := stun.NewBuilder(buf, stun.BindingRequest, tx)
	b.AddUsername(u[:])
	b.AddXORAddress(stun.AttrRelayedAddress, relayed)
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

// buildOutcome builds a signed outcome report.
func buildOutcome(buf []byte, kind byte, h engine.Handle, key *engine.Capability, path byte, millis uint32, tx [12]byte) []byte {
	u := stun.Username(kind, h)
	b := stun.NewBuilder(buf, stun.BindingRequest, tx)
	b.AddUsername(u[:])
	b.AddOutcome(path, millis)
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes()
}

func TestProcessorZeroAllocs(t *testing.T) {
	pf := newProcFixture(t)
	v, pc := pf.listing()
	host := netip.MustParseAddrPort("203.0.113.10:40000")
	client := netip.MustParseAddrPort("198.51.100.20:50000")
	buf := make([]byte, 0, 256)
	var sq uint64
	refresh := func() []packet {
		sq++
		return pf.feed(host, buildInto(buf, 'p', v.Presence, &pc, sq, [12]byte{1}))
	}
	if out := refresh(); len(out) != 1 {
		t.Fatal("no presence answer")
	}
	a := pf.attempt(v)
	hc := engine.HostAttemptCapability(&pc, a.Handle)
	cc := pf.keys.AttemptClient(a.Handle)
	hb := append([]byte(nil), buildInto(buf, 'h', a.Handle, &hc, 0, [12]byte{2})...)
	cb := append([]byte(nil), buildInto(buf, 'c', a.Handle, &cc, 0, [12]byte{3})...)
	if out := pf.feed(host, hb); len(out) != 1 {
		t.Fatal("host bind")
	}
	if out := pf.feed(client, cb); len(out) != 3 {
		t.Fatalf("client bind: %d answers, want response and two INTRODUCE", len(out))
	}
	pb := stun.NewBuilder(make([]byte, 0, 64), stun.BindingRequest, [12]byte{4})
	plain := pb.Bytes()
	f := func(name string, run func() []packet, answers int) {
		t.Helper()
		allocs := testing.AllocsPerRun(200, func() {
			if out := run(); len(out) != answers {
				t.Fatalf("%s: %d answers, want %d", name, len(out), answers)
			}
		})
		// Under -race only the plain Binding (no HMAC pad states) is held
		// to 0: see race_on_test.go.
		if allocs != 0 && (!raceEnabled || name == "plain binding") {
			t.Fatalf("%s: %v allocations per datagram, want 0", name, allocs)
		}
	}
	f("plain binding", func() []packet { return pf.feed(client, plain) }, 1)
	f("presence refresh", refresh, 1)
	f("identical re-bind with INTRODUCE re-send", func() []packet { return pf.feed(client, cb) }, 2)
	// First binds: every run binds a fresh attempt (made beforehand), the
	// host alone, then a client completing the introduction (response and
	// two INTRODUCE).
	const runs = 201
	var hostOnly, hostBound [runs]engine.AttemptView
	for i := range runs {
		hostOnly[i], hostBound[i] = pf.attempt(v), pf.attempt(v)
		k := engine.HostAttemptCapability(&pc, hostBound[i].Handle)
		if out := pf.feed(host, buildInto(buf, 'h', hostBound[i].Handle, &k, 0, [12]byte{6})); len(out) != 1 {
			t.Fatal("host bind")
		}
	}
	n := 0
	f("first host bind", func() []packet {
		a := hostOnly[n%runs]
		n++
		k := engine.HostAttemptCapability(&pc, a.Handle)
		return pf.feed(host, buildInto(buf, 'h', a.Handle, &k, 0, [12]byte{7}))
	}, 1)
	n = 0
	f("client bind completing the introduction", func() []packet {
		a := hostBound[n%runs]
		n++
		k := pf.keys.AttemptClient(a.Handle)
		return pf.feed(client, buildInto(buf, 'c', a.Handle, &k, 0, [12]byte{8}))
	}, 3)

	// Relay: a relay-only attempt whose host bound with its relayed
	// address; the client's bind with its own completes the relay
	// introduction (response and two RELAY-INTRODUCE).
	var relayReady [runs]engine.AttemptView
	hostRelay := netip.MustParseAddrPort("192.0.2.50:49152")
	clientRelay := netip.MustParseAddrPort("[2001:db8::50]:49153")
	for i := range runs {
		relayReady[i] = pf.relayAttempt(v, true)
		k := engine.HostAttemptCapability(&pc, relayReady[i].Handle)
		if out := pf.feed(host, buildRelayed(buf, 'h', relayReady[i].Handle, &k, hostRelay, [12]byte{9})); len(out) != 1 {
			t.Fatal("host bind with its relayed address")
		}
	}
	n = 0
	f("client bind completing the relay introduction", func() []packet {
		a := relayReady[n%runs]
		n++
		k := pf.keys.AttemptClient(a.Handle)
		return pf.feed(client, buildRelayed(buf, 'c', a.Handle, &k, clientRelay, [12]byte{10}))
	}, 3)
	f("relayed re-bind with RELAY-INTRODUCE re-send", func() []packet {
		k := pf.keys.AttemptClient(relayReady[0].Handle)
		return pf.feed(client, buildRelayed(buf, 'c', relayReady[0].Handle, &k, clientRelay, [12]byte{10}))
	}, 2)
	// Outcome reports: each run the first report of a side (counted in its
	// tenant's series), then a repeat.
	n = 0
	f("first outcome report", func() []packet {
		a := hostOnly[n%runs]
		n++
		k := pf.keys.AttemptClient(a.Handle)
		return pf.feed(client, buildOutcome(buf, 'c', a.Handle, &k, stun.PathRelayed, 1500, [12]byte{11}))
	}, 1)
	f("repeated outcome report", func() []packet {
		k := pf.keys.AttemptClient(hostOnly[0].Handle)
		return pf.feed(client, buildOutcome(buf, 'c', hostOnly[0].Handle, &k, stun.PathDirect, 90, [12]byte{12}))
	}, 1)

	bad := pc
	bad[0] ^= 1
	forged := func() []packet {
		return pf.feed(netip.MustParseAddrPort("192.0.2.1:1"), buildInto(buf, 'p', v.Presence, &bad, 1, [12]byte{5}))
	}
	pf.proc.limiter = newRateLimiter(1e9, 1<<20) // never limits within this check
	f("forged refresh (401)", forged, 1)
	pf.proc.limiter = newRateLimiter(10, 20)
	pf.step = 0               // the limiter's clock stands still: no refill
	for i := 0; i < 30; i++ { // exhaust the source's bucket
		forged()
	}
	f("forged refresh over the limit (dropped)", forged, 0)
}

func TestProcessorStatsAndSizeBounds(t *testing.T) {
	pf := newProcFixture(t)
	v, pc := pf.listing()
	src := netip.MustParseAddrPort("192.0.2.7:9")
	bad := pc
	bad[5] ^= 1
	req := buildInto(make([]byte, 0, 256), 'p', v.Presence, &bad, 1, [12]byte{9})
	out := pf.feed(src, req)
	if len(out) != 1 || len(out[0].buf) > len(req)+stun.MaxUnsignedGrowth {
		t.Fatalf("401 answer of %d bytes to a %d-byte request", len(out[0].buf), len(req))
	}
	if pf.proc.stats.answers[methodPresence][resUnauthorized] != 1 || pf.proc.stats.in != 1 {
		t.Fatalf("stats %+v", pf.proc.stats)
	}
	pf.proc.stats.flush(pf.med.met, 1)
	if pf.proc.stats != (batchStats{}) {
		t.Fatal("flush did not reset")
	}
}
