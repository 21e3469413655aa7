package main

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/turncred"
	"github.com/rendezvous/rendezvous/netio/stun"
)

const e2eTurnSecret = "e2e-relay-shared-secret"

// startRelayProc starts the binary with the relay fallback on.
func startRelayProc(t *testing.T, args ...string) *proc {
	t.Helper()
	secret := filepath.Join(t.TempDir(), "turn.secret")
	if err := os.WriteFile(secret, []byte(e2eTurnSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return startProc(t, append([]string{"--turn-uri", "turn:127.0.0.1:3478?transport=udp", "--turn-secret-file", secret,
		"--turn-ttl", "2m", "--relay-allow-peers", "127.0.0.0/8"}, args...)...)
}

type relayCred struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username"`
	Credential string   `json:"credential"`
	TTL        int      `json:"ttl_s"`
}

type relayJoined struct {
	joined
	RelayOnly bool       `json:"relay_only"`
	Relay     *relayCred `json:"relay"`
}

type attemptStatus struct {
	State         string `json:"state"`
	Reason        string `json:"reason"`
	RelayOnly     bool   `json:"relay_only"`
	HostBound     bool   `json:"host_bound"`
	ClientBound   bool   `json:"client_bound"`
	HostRelayed   bool   `json:"host_relayed"`
	ClientRelayed bool   `json:"client_relayed"`
	HostOutcome   *struct {
		Path      string `json:"path"`
		ConnectMS int    `json:"connect_ms"`
	} `json:"host_outcome"`
	ClientOutcome *struct {
		Path      string `json:"path"`
		ConnectMS int    `json:"connect_ms"`
	} `json:"client_outcome"`
}

func (p *proc) relayJoin(key, listing string, relayOnly bool) relayJoined {
	p.t.Helper()
	var j relayJoined
	body := map[string]any{"protocol_version": 7}
	if relayOnly {
		body["relay_only"] = true
	}
	p.call("POST", "/v1/listings/"+listing+"/join-attempts", p.tokens["client"], body, "Idempotency-Key", key).
		expect(p.t, "join", http.StatusCreated, &j)
	return j
}

func (p *proc) attemptStatus(id, token string) attemptStatus {
	p.t.Helper()
	var st attemptStatus
	p.call("GET", "/v1/join-attempts/"+id, token, nil).expect(p.t, "attempt status", http.StatusOK, &st)
	return st
}

// checkCred checks a relay credential: the configured URI, a username for
// the attempt and side, coturn's password for it under the shared secret.
func checkCred(t *testing.T, c *relayCred, attemptID string, side byte) {
	t.Helper()
	if c == nil {
		t.Fatal("no relay credential")
	}
	_, scope, _ := strings.Cut(c.Username, ":")
	if len(c.URLs) != 1 || c.URLs[0] != "turn:127.0.0.1:3478?transport=udp" || scope != attemptID+"."+string(side) ||
		c.Credential != turncred.Password([]byte(e2eTurnSecret), c.Username) || c.TTL < 120 || c.TTL > 120+30 {
		// ttl_s: the attempt's life left (30 s at most) plus --turn-ttl.
		t.Fatalf("relay credential %v, %s, ttl_s %d for %s.%c", c.URLs, c.Username, c.TTL, attemptID, side)
	}
}

// attemptRequest sends a signed attempt request with extra attributes.
func (u *udpPeer) attemptRequest(kind byte, h engine.Handle, key *engine.Capability, attrs ...func(*stun.Builder)) [12]byte {
	u.t.Helper()
	var tx [12]byte
	if _, err := rand.Read(tx[:]); err != nil {
		u.t.Fatal(err)
	}
	b := stun.NewBuilder(make([]byte, 0, stun.MaxDatagram), stun.BindingRequest, tx)
	name := stun.Username(kind, h)
	b.AddUsername(name[:])
	for _, a := range attrs {
		a(&b)
	}
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	if b.Err() != nil {
		u.t.Fatal(b.Err())
	}
	u.send(b.Bytes())
	return tx
}

func withLocal(ap netip.AddrPort) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddXORAddress(stun.AttrLocalAddress, ap) }
}

func withRelayed(ap netip.AddrPort) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddXORAddress(stun.AttrRelayedAddress, ap) }
}

func withOutcome(path byte, ms uint32) func(*stun.Builder) {
	return func(b *stun.Builder) { b.AddOutcome(path, ms) }
}

// waitState polls the attempt's state until it is want (bounded).
func (p *proc) waitState(id, token, want string) attemptStatus {
	p.t.Helper()
	var st attemptStatus
	for i := 0; i < 400; i++ {
		if st = p.attemptStatus(id, token); st.State == want {
			return st
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("attempt %s stayed %q (%s), want %q", id, st.State, st.Reason, want)
	return st
}

// TestE2ERelayLifecycle: from the real binary, a direct attempt whose punch
// then falls back to the relay goes created/offered -> host_bound ->
// introduced -> relayed, both sides' outcome reports are kept and counted
// once per side in the tenant's metrics, and every exchange matches the
// OpenAPI description; on both stores.
func TestE2ERelayLifecycle(t *testing.T) { relayLifecycle(t) }

func TestE2ERelayLifecycleRedis(t *testing.T) { relayLifecycle(t, redisStoreArgs(t)...) }

func relayLifecycle(t *testing.T, storeArgs ...string) {
	p := startRelayProc(t, storeArgs...)
	cli, pub := p.tokens["client"], p.tokens["publisher"]
	h := publishHost(t, p, "relay-host", "relay game")
	client := newPeer(t, p.mediator)

	j := p.relayJoin("relay-join-1", h.pub.ListingID, false)
	if j.RelayOnly {
		t.Fatal("a plain join is relay-only")
	}
	// A plain attempt's credential comes only once it needs the relay.
	if j.Relay != nil {
		t.Fatal("a plain join's answer carries a relay credential")
	}
	p.call("GET", "/v1/join-attempts/"+j.AttemptID+"/relay", cli, nil).expect(t, "client relay before the introduction", http.StatusConflict, nil)
	a := mustHandle(t, j.Handle)
	h.offered(a)
	st := p.waitState(j.AttemptID, cli, "offered")
	if st.Reason != "awaiting_host_bind" || st.RelayOnly || st.HostBound || st.ClientBound {
		t.Fatalf("offered status %+v", st)
	}
	// The owner reads the same state and fetches the host's credential by
	// the handle the OFFER named.
	if st := p.attemptStatus(j.AttemptID, pub); st.State != "offered" {
		t.Fatalf("owner reads %+v", st)
	}
	var hr struct {
		Relay     *relayCred `json:"relay"`
		RelayOnly bool       `json:"relay_only"`
	}
	p.call("GET", "/v1/listings/"+h.pub.ListingID+"/join-attempts/"+j.Handle+"/relay", pub, nil).
		expect(t, "host relay", http.StatusOK, &hr)
	checkCred(t, hr.Relay, j.AttemptID, 'h')

	hostCap := engine.HostAttemptCapability(&h.cap, a)
	clientCap := mustToken(t, j.Token)
	tx := h.peer.attemptRequest(stun.KindAttemptHost, a, &hostCap, withLocal(hostLAN))
	h.peer.expectResponse(tx, &hostCap)
	if st := p.attemptStatus(j.AttemptID, cli); st.State != "host_bound" || st.Reason != "awaiting_client_bind" {
		t.Fatalf("after the host bind: %+v", st)
	}
	tx = client.attemptRequest(stun.KindAttemptClient, a, &clientCap, withLocal(clientLAN))
	client.expectResponse(tx, &clientCap)
	client.expectIntroduce(client.read(), stun.KindAttemptClient, a, &clientCap, h.peer.addr(), hostLAN)
	h.peer.expectIntroduce(h.peer.read(), stun.KindAttemptHost, a, &hostCap, client.addr(), clientLAN)
	if st := p.attemptStatus(j.AttemptID, cli); st.State != "introduced" || st.Reason != "introduced" {
		t.Fatalf("after both binds: %+v", st)
	}

	// The punch failed: the client asks for its credential (the same on
	// every ask), and both bind again with their relayed addresses.
	var cr, cr2 struct {
		Relay *relayCred `json:"relay"`
	}
	p.call("GET", "/v1/join-attempts/"+j.AttemptID+"/relay", cli, nil).expect(t, "client relay", http.StatusOK, &cr)
	p.call("GET", "/v1/join-attempts/"+j.AttemptID+"/relay", cli, nil).expect(t, "client relay again", http.StatusOK, &cr2)
	checkCred(t, cr.Relay, j.AttemptID, 'c')
	if cr2.Relay == nil || cr2.Relay.Username != cr.Relay.Username || cr2.Relay.Credential != cr.Relay.Credential {
		t.Fatal("two asks, two credentials")
	}
	hostRelay := netip.MustParseAddrPort("127.0.0.1:49160")
	clientRelay := netip.MustParseAddrPort("127.0.0.1:49161")
	tx = h.peer.attemptRequest(stun.KindAttemptHost, a, &hostCap, withLocal(hostLAN), withRelayed(hostRelay))
	h.peer.expectResponse(tx, &hostCap)
	if st := p.attemptStatus(j.AttemptID, cli); st.State != "introduced" || st.Reason != "awaiting_relay_candidates" || !st.HostRelayed {
		t.Fatalf("after the host's relayed address: %+v", st)
	}
	tx = client.attemptRequest(stun.KindAttemptClient, a, &clientCap, withLocal(clientLAN), withRelayed(clientRelay))
	client.expectResponse(tx, &clientCap)
	m := client.readSigned(stun.RelayIntroduceIndication, &clientCap)
	if got, ok := m.XORAddress(stun.AttrXORPeerAddress); !ok || got != hostRelay {
		t.Fatalf("client's RELAY-INTRODUCE names %v, want %v", got, hostRelay)
	}
	m = h.peer.readSigned(stun.RelayIntroduceIndication, &hostCap)
	if got, ok := m.XORAddress(stun.AttrXORPeerAddress); !ok || got != clientRelay {
		t.Fatalf("host's RELAY-INTRODUCE names %v, want %v", got, clientRelay)
	}
	if st := p.attemptStatus(j.AttemptID, pub); st.State != "relayed" || st.Reason != "relayed" || !st.ClientRelayed {
		t.Fatalf("after both relayed addresses: %+v", st)
	}

	// Outcome reports, each sent twice: kept and counted once per side.
	for i := 0; i < 2; i++ {
		tx = h.peer.attemptRequest(stun.KindAttemptHost, a, &hostCap, withOutcome(stun.PathRelayed, 1800))
		h.peer.expectResponse(tx, &hostCap)
		tx = client.attemptRequest(stun.KindAttemptClient, a, &clientCap, withOutcome(stun.PathRelayed, 1750))
		client.expectResponse(tx, &clientCap)
	}
	st = p.attemptStatus(j.AttemptID, cli)
	if st.State != "relayed" || st.HostOutcome == nil || st.HostOutcome.Path != "relayed" || st.HostOutcome.ConnectMS != 1800 ||
		st.ClientOutcome == nil || st.ClientOutcome.ConnectMS != 1750 {
		t.Fatalf("after the reports: %+v", st)
	}
	s := scrapeURL(t, "http://"+p.httpAddr+"/metrics", statsToken(p.tokens))
	for series, want := range map[string]float64{
		`rendezvous_punch_outcomes_total{tenant="demo/dev",role="host",path="relayed"}`:    1,
		`rendezvous_punch_outcomes_total{tenant="demo/dev",role="client",path="relayed"}`:  1,
		`rendezvous_punch_outcomes_total{tenant="demo/dev",role="host",path="direct"}`:     0,
		`rendezvous_punch_connect_seconds_count{tenant="demo/dev",path="relayed"}`:         2,
		`rendezvous_punch_connect_seconds_bucket{tenant="demo/dev",path="relayed",le="2"}`: 2,
		`rendezvous_punch_connect_seconds_bucket{tenant="demo/dev",path="relayed",le="1"}`: 0,
		`rendezvous_udp_answers_total{method="relay_introduce",outcome="success"}`:         2,
		`rendezvous_udp_answers_total{method="outcome_client",outcome="success"}`:          2,
	} {
		if got, ok := s.samples[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	promtoolCheck(t, "after relay traffic", s.text)
	for _, leak := range []string{e2eTurnSecret, cr.Relay.Credential, hr.Relay.Credential, cr.Relay.Username, j.Handle, "49160"} {
		if strings.Contains(s.text, leak) {
			t.Fatal("the metrics carry the relay secret, a credential, a handle or an address")
		}
	}
	p.assertNoSecrets([]string{e2eTurnSecret, cr.Relay.Credential, hr.Relay.Credential}, []string{j.Token, h.pub.Presence.Token})
}

// TestE2ERelayOnlyRevealsNoAddress: a relay-only join on the real binary.
// Neither side receives, in any datagram, the other's public or LAN
// address; both get RDV-RELAY-ONLY on their bind answers, no INTRODUCE, and
// the relayed addresses through RELAY-INTRODUCE. On both stores.
func TestE2ERelayOnlyRevealsNoAddress(t *testing.T) { relayOnlyRevealsNoAddress(t) }

func TestE2ERelayOnlyRevealsNoAddressRedis(t *testing.T) {
	relayOnlyRevealsNoAddress(t, redisStoreArgs(t)...)
}

func relayOnlyRevealsNoAddress(t *testing.T, storeArgs ...string) {
	p := startRelayProc(t, storeArgs...)
	h := publishHost(t, p, "relay-only-host", "private game")
	client := newPeer(t, p.mediator)
	j := p.relayJoin("relay-only-1", h.pub.ListingID, true)
	if !j.RelayOnly {
		t.Fatal("the join answer does not say relay-only")
	}
	checkCred(t, j.Relay, j.AttemptID, 'c')
	a := mustHandle(t, j.Handle)
	h.offered(a)
	hostCap := engine.HostAttemptCapability(&h.cap, a)
	clientCap := mustToken(t, j.Token)

	var hostGot, clientGot []*stun.Message
	bind := func(u *udpPeer, got *[]*stun.Message, kind byte, key *engine.Capability, attrs ...func(*stun.Builder)) {
		t.Helper()
		tx := u.attemptRequest(kind, a, key, attrs...)
		m := u.expectResponse(tx, key)
		if !m.Has(stun.AttrRelayOnly) {
			t.Fatal("a relay-only attempt's bind answer lacks RDV-RELAY-ONLY")
		}
		*got = append(*got, m)
	}
	bind(h.peer, &hostGot, stun.KindAttemptHost, &hostCap, withLocal(hostLAN))
	bind(client, &clientGot, stun.KindAttemptClient, &clientCap, withLocal(clientLAN))
	// Nothing else arrives: the next datagram of each side is the answer
	// to a plain Binding.
	for _, u := range []*udpPeer{h.peer, client} {
		tx := u.plainBinding()
		u.checkTx(u.read(), tx)
	}
	if st := p.attemptStatus(j.AttemptID, p.tokens["client"]); st.State != "client_bound" || st.Reason != "awaiting_relay_candidates" || !st.RelayOnly {
		t.Fatalf("relay-only with both bound: %+v", st)
	}
	var hr struct {
		RelayOnly bool `json:"relay_only"`
	}
	p.call("GET", "/v1/listings/"+h.pub.ListingID+"/join-attempts/"+j.Handle+"/relay", p.tokens["publisher"], nil).
		expect(t, "host relay", http.StatusOK, &hr)
	if !hr.RelayOnly {
		t.Fatal("the host relay answer does not say relay-only")
	}

	hostRelay := netip.MustParseAddrPort("127.0.0.2:50000")
	clientRelay := netip.MustParseAddrPort("127.0.0.2:50001")
	bind(h.peer, &hostGot, stun.KindAttemptHost, &hostCap, withLocal(hostLAN), withRelayed(hostRelay))
	bind(client, &clientGot, stun.KindAttemptClient, &clientCap, withLocal(clientLAN), withRelayed(clientRelay))
	m := client.readSigned(stun.RelayIntroduceIndication, &clientCap)
	clientGot = append(clientGot, m)
	m = h.peer.readSigned(stun.RelayIntroduceIndication, &hostCap)
	hostGot = append(hostGot, m)
	for _, u := range []*udpPeer{h.peer, client} {
		tx := u.plainBinding()
		u.checkTx(u.read(), tx)
	}

	inspect := func(side string, got []*stun.Message, other *udpPeer, otherLAN, otherRelay netip.AddrPort) {
		t.Helper()
		sawRelay := false
		for _, m := range got {
			if m.Type() == stun.IntroduceIndication {
				t.Fatalf("%s received an INTRODUCE", side)
			}
			for _, at := range []uint16{stun.AttrXORPeerAddress, stun.AttrPeerLocalAddress, stun.AttrXORMappedAddress} {
				ap, ok := m.XORAddress(at)
				if !ok {
					continue
				}
				if ap == other.addr() || ap.Addr() == otherLAN.Addr() {
					t.Fatalf("%s received %v (attribute %#x), the other side's address", side, ap, at)
				}
				sawRelay = sawRelay || ap == otherRelay
			}
			if raw := fmt.Sprintf("%x", m.Raw()); strings.Contains(raw, fmt.Sprintf("%x", otherLAN.Addr().AsSlice())) {
				t.Fatalf("%s received the other side's LAN address in clear", side)
			}
		}
		if !sawRelay {
			t.Fatalf("%s never learned the other side's relayed address", side)
		}
	}
	inspect("host", hostGot, client, clientLAN, clientRelay)
	inspect("client", clientGot, h.peer, hostLAN, hostRelay)
	if st := p.attemptStatus(j.AttemptID, p.tokens["publisher"]); st.State != "relayed" {
		t.Fatalf("final state %+v", st)
	}
}

// TestE2EAttemptEndsAndRelayOff: an attempt nobody binds expires, one
// whose listing is deleted fails, and both states stay readable; without
// relay flags there is no relay member and relay-only is refused.
func TestE2EAttemptEndsAndRelayOff(t *testing.T) {
	p := startProc(t, "--attempt-ttl", "1s")
	h := publishHost(t, p, "ends-host", "short game")
	var j relayJoined
	p.call("POST", "/v1/listings/"+h.pub.ListingID+"/join-attempts", p.tokens["client"], map[string]any{"protocol_version": 7},
		"Idempotency-Key", "ends-1").expect(t, "join", http.StatusCreated, &j)
	if j.Relay != nil || j.RelayOnly {
		t.Fatalf("relay off: the join answer has relay %+v, relay_only %v", j.Relay, j.RelayOnly)
	}
	h.offered(mustHandle(t, j.Handle))
	st := p.waitState(j.AttemptID, p.tokens["client"], "expired")
	if st.Reason != "awaiting_host_bind" {
		t.Fatalf("expired attempt's reason %q, want awaiting_host_bind", st.Reason)
	}
	if st := p.attemptStatus(j.AttemptID, p.tokens["publisher"]); st.State != "expired" {
		t.Fatalf("the owner reads %+v", st)
	}
	r := p.call("POST", "/v1/listings/"+h.pub.ListingID+"/join-attempts", p.tokens["client"],
		map[string]any{"protocol_version": 7, "relay_only": true}, "Idempotency-Key", "ends-2")
	if r.status != http.StatusConflict || r.problemCode(t) != "relay_unavailable" {
		t.Fatalf("relay-only with relay off: %d %s", r.status, r.body)
	}
	r = p.call("GET", "/v1/listings/"+h.pub.ListingID+"/join-attempts/"+j.AttemptID+"/relay", p.tokens["publisher"], nil)
	if r.status != http.StatusConflict || r.problemCode(t) != "relay_unavailable" {
		t.Fatalf("host relay with relay off: %d %s", r.status, r.body)
	}
	if r := p.call("GET", "/v1/join-attempts/"+engine.NewUUID().String(), p.tokens["client"], nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown attempt: %d", r.status)
	}

	// An attempt whose listing is deleted fails, and says why.
	var k relayJoined
	p.call("POST", "/v1/listings/"+h.pub.ListingID+"/join-attempts", p.tokens["client"], map[string]any{"protocol_version": 7},
		"Idempotency-Key", "ends-3").expect(t, "join", http.StatusCreated, &k)
	p.call("DELETE", "/v1/listings/"+h.pub.ListingID, p.tokens["publisher"], nil,
		"Lease-Id", h.pub.Lease.LeaseID, "Lease-Token", h.pub.Lease.Token).expect(t, "delete", http.StatusNoContent, nil)
	if st := p.attemptStatus(k.AttemptID, p.tokens["client"]); st.State != "failed" || st.Reason != "listing_removed" {
		t.Fatalf("after the listing's deletion: %+v", st)
	}
}
