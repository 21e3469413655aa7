package netio

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

func relayedAddr(ap netip.AddrPort) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddXORAddress(stun.AttrRelayedAddress, ap) }
}

func outcome(path byte, millis uint32) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddOutcome(path, millis) }
}

// relayAttempt creates an attempt on v, relay-only or not.
func (f *fixture) relayAttempt(v engine.ListingView, relayOnly bool) engine.AttemptView {
	f.t.Helper()
	f.n++
	a, r, err := f.store.CreateJoinAttempt(context.Background(), engine.CreateAttempt{
		Tenant: testTenant, Client: "cli-1", IdempotencyKey: fmt.Sprintf("a-%d", f.n),
		Listing: v.ID, ProtocolVersion: 7, RelayOnly: relayOnly,
	})
	if err != nil || !r.OK() {
		f.t.Fatalf("CreateJoinAttempt: %v %v", r, err)
	}
	return a
}

func (f *fixture) status(a engine.AttemptView) engine.AttemptStatus {
	f.t.Helper()
	st, r, err := f.store.AttemptStatus(context.Background(), engine.GetAttempt{Tenant: testTenant, Subject: "cli-1", Attempt: a.ID})
	if err != nil || !r.OK() {
		f.t.Fatalf("AttemptStatus: %v %v", r, err)
	}
	return st
}

// relayScene is a listing whose host refreshed its presence from its own
// socket, a client socket, and one attempt with both sides' capabilities.
type relayScene struct {
	v            engine.ListingView
	pc, hk, ck   engine.Capability
	host, client *peer
	a            engine.AttemptView
}

func (f *fixture) relayScene(relayOnly bool) *relayScene {
	f.t.Helper()
	s := &relayScene{host: f.peer(), client: f.peer()}
	s.v, s.pc = f.listing()
	wantSuccess(f.t, s.host.roundTrip(signedReq('p', s.v.Presence, s.pc[:], seq(1))), s.pc[:], s.host.addr())
	s.a = f.relayAttempt(s.v, relayOnly)
	s.hk = engine.HostAttemptCapability(&s.pc, s.a.Handle)
	s.ck = f.keys.AttemptClient(s.a.Handle)
	return s
}

// wantRelayIntroduce checks a RELAY-INTRODUCE: its type, USERNAME kind:h,
// the peer's relayed address and nothing else, the recipient's signature,
// and the transaction ID derived from the handle.
func wantRelayIntroduce(t *testing.T, m *stun.Message, kind byte, h engine.Handle, key []byte, peerRelayed netip.AddrPort) {
	t.Helper()
	if m.Type() != stun.RelayIntroduceIndication {
		t.Fatalf("type %#x, want RELAY-INTRODUCE", m.Type())
	}
	u := stun.Username(kind, h)
	if got, _ := m.Username(); !bytes.Equal(got, u[:]) {
		t.Fatalf("USERNAME %q, want %q", got, u[:])
	}
	if got, ok := m.XORAddress(stun.AttrXORPeerAddress); !ok || got != peerRelayed {
		t.Fatalf("XOR-PEER-ADDRESS %v, want the peer's relayed %v", got, peerRelayed)
	}
	if m.Has(stun.AttrPeerLocalAddress) || m.Has(stun.AttrXORMappedAddress) {
		t.Fatal("RELAY-INTRODUCE carries another address")
	}
	if !m.CheckIntegrity(key) {
		t.Fatal("RELAY-INTRODUCE not signed with the recipient's capability")
	}
	want := indicationTxID(kind, h)
	want[0] ^= 0x80
	if m.TransactionID() != want {
		t.Fatalf("transaction ID %x, want %x", m.TransactionID(), want)
	}
}

// A direct attempt whose punch failed: both sides bind again with their
// relayed addresses; the second such bind sends RELAY-INTRODUCE to both,
// once; a retransmission re-sends the sender's only, byte for byte, and no
// INTRODUCE.
func TestRelayIntroduceAfterDirect(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.relayScene(false)
	host, client, a, hk, ck := s.host, s.client, s.a, s.hk, s.ck
	hostRelay := netip.MustParseAddrPort("192.0.2.50:49152")
	clientRelay := netip.MustParseAddrPort("[2001:db8::77]:50001")

	wantSuccess(t, host.roundTrip(signedReq('h', a.Handle, hk[:])), hk[:], host.addr())
	m := client.roundTrip(signedReq('c', a.Handle, ck[:]))
	wantSuccess(t, m, ck[:], client.addr())
	if m.Has(stun.AttrRelayOnly) {
		t.Fatal("a direct attempt's bind answer says relay-only")
	}
	if m, _ := client.recv(); m.Type() != stun.IntroduceIndication {
		t.Fatalf("client: %#x, want INTRODUCE", m.Type())
	}
	if m, _ := host.recv(); m.Type() != stun.IntroduceIndication {
		t.Fatalf("host: %#x, want INTRODUCE", m.Type())
	}

	// The host's relayed address alone introduces nothing.
	wantSuccess(t, host.roundTrip(signedReq('h', a.Handle, hk[:], relayedAddr(hostRelay))), hk[:], host.addr())
	host.barrier()
	client.barrier()
	if st := f.status(a); st.State != engine.AttemptIntroduced || !st.HostRelayed || st.ClientRelayed {
		t.Fatalf("status after the host's relayed address: %+v", st)
	}

	// The client's completes it: both get RELAY-INTRODUCE.
	clientBind := signedReq('c', a.Handle, ck[:], relayedAddr(clientRelay))
	wantSuccess(t, client.roundTrip(clientBind), ck[:], client.addr())
	first, _ := client.recv()
	wantRelayIntroduce(t, first, 'c', a.Handle, ck[:], hostRelay)
	m, _ = host.recv()
	wantRelayIntroduce(t, m, 'h', a.Handle, hk[:], clientRelay)
	if st := f.status(a); st.State != engine.AttemptRelayed || st.Reason != engine.ReasonRelayed {
		t.Fatalf("status after both relayed addresses: %v/%v", st.State, st.Reason)
	}

	// A retransmission: the client's RELAY-INTRODUCE again, identical; no
	// INTRODUCE re-send, nothing to the host.
	wantSuccess(t, client.roundTrip(clientBind), ck[:], client.addr())
	again, _ := client.recv()
	if !bytes.Equal(again.Raw(), first.Raw()) {
		t.Fatal("the re-sent RELAY-INTRODUCE differs from the first")
	}
	client.barrier()
	host.barrier()

	// Another relayed address for a side that has one: 409, nothing sent.
	wantError(t, client.roundTrip(signedReq('c', a.Handle, ck[:], relayedAddr(netip.MustParseAddrPort("192.0.2.99:1000")))), 409, ck[:])
	client.barrier()
	host.barrier()
}

// A relay-only attempt: binds succeed with RDV-RELAY-ONLY and no INTRODUCE
// is ever sent; RELAY-INTRODUCE carries the relayed addresses only. Neither
// side receives, in any datagram, the other's public or LAN address.
func TestRelayOnlyNeverRevealsAddresses(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.relayScene(true)
	host, client, a, hk, ck := s.host, s.client, s.a, s.hk, s.ck
	if !a.RelayOnly {
		t.Fatal("the attempt view does not say relay-only")
	}
	hostLAN := netip.MustParseAddrPort("10.1.1.1:7000")
	clientLAN := netip.MustParseAddrPort("10.2.2.2:7000")
	hostRelay := netip.MustParseAddrPort("192.0.2.50:49152")
	clientRelay := netip.MustParseAddrPort("192.0.2.50:49153")

	var hostGot, clientGot []*stun.Message
	rt := func(p *peer, got *[]*stun.Message, req []byte, key []byte) {
		t.Helper()
		m := p.roundTrip(req)
		wantSuccess(t, m, key, p.addr())
		if !m.Has(stun.AttrRelayOnly) {
			t.Fatal("a relay-only attempt's bind answer lacks RDV-RELAY-ONLY")
		}
		*got = append(*got, m)
	}
	rt(host, &hostGot, signedReq('h', a.Handle, hk[:], localAddr(hostLAN)), hk[:])
	rt(client, &clientGot, signedReq('c', a.Handle, ck[:], localAddr(clientLAN)), ck[:])
	host.barrier()
	client.barrier()
	if st := f.status(a); st.State != engine.AttemptClientBound || st.Reason != engine.ReasonAwaitingRelayCandidates || !st.RelayOnly {
		t.Fatalf("status with both bound: %v/%v relay_only=%v", st.State, st.Reason, st.RelayOnly)
	}

	rt(host, &hostGot, signedReq('h', a.Handle, hk[:], localAddr(hostLAN), relayedAddr(hostRelay)), hk[:])
	host.barrier()
	client.barrier()
	rt(client, &clientGot, signedReq('c', a.Handle, ck[:], localAddr(clientLAN), relayedAddr(clientRelay)), ck[:])
	m, _ := client.recv()
	wantRelayIntroduce(t, m, 'c', a.Handle, ck[:], hostRelay)
	clientGot = append(clientGot, m)
	m, _ = host.recv()
	wantRelayIntroduce(t, m, 'h', a.Handle, hk[:], clientRelay)
	hostGot = append(hostGot, m)
	host.barrier()
	client.barrier()

	// Retransmitted plain binds of either side: success, nothing else.
	rt(host, &hostGot, signedReq('h', a.Handle, hk[:], localAddr(hostLAN)), hk[:])
	rt(client, &clientGot, signedReq('c', a.Handle, ck[:], localAddr(clientLAN)), ck[:])
	host.barrier()
	client.barrier()

	inspect := func(side string, got []*stun.Message, forbidden ...netip.AddrPort) {
		t.Helper()
		for _, m := range got {
			if m.Type() == stun.IntroduceIndication {
				t.Fatalf("%s received an INTRODUCE", side)
			}
			for _, at := range []uint16{stun.AttrXORMappedAddress, stun.AttrXORPeerAddress, stun.AttrPeerLocalAddress, stun.AttrLocalAddress} {
				ap, ok := m.XORAddress(at)
				for _, f := range forbidden {
					if ok && ap.Addr() == f.Addr() {
						t.Fatalf("%s received %v (attribute %#x), an address of the other side", side, ap, at)
					}
				}
			}
			for _, f := range forbidden {
				if bytes.Contains(m.Raw(), f.Addr().AsSlice()) {
					t.Fatalf("%s received the other side's address %v in clear", side, f)
				}
			}
		}
	}
	// Both peers are on 127.0.0.1, so the public address is the loopback:
	// check the LAN addresses, and that no answer names the other's port.
	inspect("host", hostGot, clientLAN)
	inspect("client", clientGot, hostLAN)
	for _, m := range hostGot {
		if ap, ok := m.XORAddress(stun.AttrXORPeerAddress); ok && ap.Port() == client.addr().Port() {
			t.Fatal("the host received the client's public endpoint")
		}
	}
	for _, m := range clientGot {
		if ap, ok := m.XORAddress(stun.AttrXORPeerAddress); ok && ap.Port() == host.addr().Port() {
			t.Fatal("the client received the host's public endpoint")
		}
	}
	if st := f.status(a); st.State != engine.AttemptRelayed {
		t.Fatalf("final state %v, want relayed", st.State)
	}
	if n := f.med.met.answers[methodIntroduce][resOK].Get(); n != 0 {
		t.Fatalf("%d INTRODUCE sent for a relay-only attempt", n)
	}
}

// A malformed RDV-RELAYED-ADDRESS or RDV-OUTCOME gets a signed 400 and
// changes nothing.
func TestRelayAttributesMalformed(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	p := f.peer()
	wantSuccess(t, p.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], p.addr())
	a := f.relayAttempt(v, false)
	ck := f.keys.AttemptClient(a.Handle)
	before := f.store.Snapshot()
	for name, attr := range map[string]func(*stun.Builder){
		"relayed address of 5 bytes": func(b *stun.Builder) { b.AddBytes(stun.AttrRelayedAddress, []byte{0, 1, 0, 0, 0}) },
		"outcome of 4 bytes":         func(b *stun.Builder) { b.AddBytes(stun.AttrOutcome, []byte{1, 0, 0, 0}) },
		"outcome path 9":             func(b *stun.Builder) { b.AddBytes(stun.AttrOutcome, []byte{9, 0, 0, 0, 0, 0, 0, 1}) },
	} {
		t.Logf("%s", name)
		wantError(t, p.roundTrip(signedReq('c', a.Handle, ck[:], attr)), 400, ck[:])
	}
	if after := f.store.Snapshot(); after != before {
		t.Fatalf("a refused request changed the store:\n%s\n---\n%s", before, after)
	}
}

// Outcome reports: answered like a bind, counted once per side in the
// tenant's series, never changing the attempt's state; a repeat succeeds
// uncounted; an unknown attempt gets the usual 404 (c:) or 401 (h:).
func TestOutcomeReports(t *testing.T) {
	other := engine.Tenant{Game: "other-game", Env: "prod"}
	f := newFixture(t, Config{Tenants: []engine.Tenant{testTenant, other}})
	// Registered at start, at 0, for every configured tenant.
	wantMetrics(t, f.set, "at start",
		`rendezvous_punch_outcomes_total{tenant="other-game/prod",role="client",path="failed"} 0`,
		`rendezvous_punch_outcomes_total{tenant="demo/dev",role="host",path="direct"} 0`,
		`rendezvous_punch_connect_seconds_count{tenant="demo/dev",path="relayed"} 0`)

	s := f.relayScene(false)
	host, client, a, hk, ck := s.host, s.client, s.a, s.hk, s.ck
	wantSuccess(t, host.roundTrip(signedReq('h', a.Handle, hk[:])), hk[:], host.addr())
	state := f.status(a).State

	count := func(role, path string) uint64 {
		t.Helper()
		return f.set.GetOrCreateCounter(fmt.Sprintf(`rendezvous_punch_outcomes_total{tenant="demo/dev",role=%q,path=%q}`, role, path)).Get()
	}
	m := host.roundTrip(signedReq('h', a.Handle, hk[:], outcome(stun.PathDirect, 180)))
	wantSuccess(t, m, hk[:], host.addr())
	if lt, ok := m.Uint32(stun.AttrLifetime); !ok || lt == 0 || lt > uint32(engine.DefaultLimits().AttemptTTL.Seconds()) {
		t.Fatalf("report answer RDV-LIFETIME %d %v", lt, ok)
	}
	// A repeat (even with another path) succeeds and is not counted.
	wantSuccess(t, host.roundTrip(signedReq('h', a.Handle, hk[:], outcome(stun.PathFailed, 9000))), hk[:], host.addr())
	wantSuccess(t, client.roundTrip(signedReq('c', a.Handle, ck[:], outcome(stun.PathRelayed, 2500))), ck[:], client.addr())
	host.barrier()
	client.barrier()
	if count("host", "direct") != 1 || count("host", "failed") != 0 || count("client", "relayed") != 1 {
		t.Fatalf("counters host/direct %v host/failed %v client/relayed %v, want 1 0 1",
			count("host", "direct"), count("host", "failed"), count("client", "relayed"))
	}
	wantMetrics(t, f.set, "after the reports",
		`rendezvous_punch_connect_seconds_bucket{tenant="demo/dev",path="direct",le="0.25"} 1`,
		`rendezvous_punch_connect_seconds_bucket{tenant="demo/dev",path="direct",le="0.1"} 0`,
		`rendezvous_punch_connect_seconds_bucket{tenant="demo/dev",path="relayed",le="3"} 1`,
		`rendezvous_punch_connect_seconds_count{tenant="demo/dev",path="failed"} 0`)
	st := f.status(a)
	if st.State != state || st.HostOutcome.Path != engine.PathDirect || st.HostOutcome.ConnectMillis != 180 ||
		st.ClientOutcome.Path != engine.PathRelayed {
		t.Fatalf("status after the reports: %+v (state before %v)", st, state)
	}
	if f.med.met.answers[methodReportHost][resOK].Get() != 2 || f.med.met.answers[methodReportClient][resOK].Get() != 1 {
		t.Fatal("report answers not counted by method")
	}

	// Unknown attempts.
	gone := engine.Handle{UUID: engine.NewUUID()}
	gk := f.keys.AttemptClient(gone)
	wantError(t, client.roundTrip(signedReq('c', gone, gk[:], outcome(stun.PathDirect, 1))), 404, gk[:])
	wantError(t, host.roundTrip(signedReq('h', gone, hk[:], outcome(stun.PathDirect, 1))), 401, nil)
}

// OFFER sent: the attempt's state moves from created to offered.
func TestOfferMarksOffered(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	host := f.peer()
	wantSuccess(t, host.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], host.addr())
	a := f.relayAttempt(v, false)
	if st := f.status(a); st.State != engine.AttemptCreated {
		t.Fatalf("state before the OFFER: %v", st.State)
	}
	f.med.Offer(a)
	if m, _ := host.recv(); m.Type() != stun.OfferIndication {
		t.Fatalf("host got %#x, want OFFER", m.Type())
	}
	// MarkOffered follows the send on the mark goroutine: wait for it,
	// bounded.
	waitFor(t, func() bool { return f.status(a).State == engine.AttemptOffered })

	// No OFFER: the presence answer naming the attempt marks it.
	b := f.relayAttempt(v, false)
	m := host.roundTrip(signedReq('p', v.Presence, pc[:], seq(2)))
	wantSuccess(t, m, pc[:], host.addr())
	named := false
	for h := range m.Attempts() {
		named = named || h == b.Handle
	}
	if !named {
		t.Fatal("the presence answer does not name the pending attempt")
	}
	waitFor(t, func() bool { return f.status(b).State == engine.AttemptOffered })
}

// The wire paths of RDV-OUTCOME are the engine's.
func TestOutcomePathsMatchEngine(t *testing.T) {
	if engine.Path(stun.PathDirect) != engine.PathDirect || engine.Path(stun.PathRelayed) != engine.PathRelayed ||
		engine.Path(stun.PathFailed) != engine.PathFailed {
		t.Fatal("stun and engine path numbers differ")
	}
	for i, n := range punchPathNames {
		if engine.Path(i+1).String() != n {
			t.Fatalf("path %d is %q in the metrics and %q in the engine", i+1, n, engine.Path(i+1))
		}
	}
}

// waitFor polls cond until it holds, failing after waitBound.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within the test bound")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
