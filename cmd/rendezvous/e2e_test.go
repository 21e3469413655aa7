package main

import (
	"flag"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Made-up LAN endpoints the peers report in RDV-LOCAL-ADDRESS.
var (
	hostLAN   = netip.MustParseAddrPort("192.168.1.10:5000")
	clientLAN = netip.MustParseAddrPort("10.0.0.7:6000")
)

// host is a published listing with its host's UDP socket.
type host struct {
	pub      published
	peer     *udpPeer
	presence engine.Handle
	cap      engine.Capability // presence capability
	seq      uint64
}

// publishHost publishes a listing and refreshes its presence once.
func publishHost(t testing.TB, p *proc, key, name string) *host {
	t.Helper()
	pub := p.publish(key, name)
	if pub.Presence.Mediator != p.mediator {
		t.Fatalf("publish names mediator %q, the server bound %q", pub.Presence.Mediator, p.mediator)
	}
	return presenceOn(t, p, pub)
}

// presenceOn keeps the presence of listing pub on p's mediator, whichever
// instance the listing names (any instance serves any datagram), and sends
// the first refresh.
func presenceOn(t testing.TB, p *proc, pub published) *host {
	t.Helper()
	h := &host{pub: pub}
	h.presence = mustHandle(t, h.pub.Presence.Handle)
	h.cap = mustToken(t, h.pub.Presence.Token)
	h.peer = newPeer(t, p.mediator)
	h.refresh()
	return h
}

// refresh sends the next presence refresh and returns the success response.
func (h *host) refresh() *stun.Message {
	h.peer.t.Helper()
	h.seq++
	tx := h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	return h.peer.expectResponse(tx, &h.cap)
}

// offered reads the OFFER for attempt a on the host socket.
func (h *host) offered(a engine.Handle) {
	t := h.peer.t
	t.Helper()
	m := h.peer.readSigned(stun.OfferIndication, &h.cap)
	want := stun.Username(stun.KindPresence, h.presence)
	if got, _ := m.Username(); string(got) != string(want[:]) {
		t.Fatalf("OFFER USERNAME %q, want %q", got, want)
	}
	if got, ok := m.Attempt(); !ok || got != a {
		t.Fatalf("OFFER names attempt %v (present %v), want %v", got, ok, a)
	}
	if life, ok := m.Uint32(stun.AttrLifetime); !ok || life == 0 || life > 30 {
		t.Fatalf("OFFER RDV-LIFETIME %d (present %v), want 1..30", life, ok)
	}
}

// introduce binds both sides of attempt j (the client from its own socket)
// and checks both INTRODUCEs. It returns the host's attempt capability.
func introduce(t testing.TB, h *host, client *udpPeer, j joined) engine.Capability {
	t.Helper()
	a := mustHandle(t, j.Handle)
	hostCap := engine.HostAttemptCapability(&h.cap, a)
	clientCap := mustToken(t, j.Token)

	tx := h.peer.request(stun.KindAttemptHost, a, &hostCap, 0, hostLAN)
	h.peer.expectResponse(tx, &hostCap)
	tx = client.request(stun.KindAttemptClient, a, &clientCap, 0, clientLAN)

	// The client gets its response and its INTRODUCE, in either order.
	var gotResp, gotIntro bool
	for i := 0; i < 2; i++ {
		m := client.read()
		switch m.Type() {
		case stun.BindingSuccess:
			client.checkTx(m, tx)
			if !m.CheckIntegrity(clientCap[:]) {
				t.Fatalf("client bind response is not signed with the client capability")
			}
			gotResp = true
		case stun.IntroduceIndication:
			client.expectIntroduce(m, stun.KindAttemptClient, a, &clientCap, h.peer.addr(), hostLAN)
			gotIntro = true
		default:
			code, reason, _ := m.ErrorCode()
			t.Fatalf("client got message type %#x (error %d %s)", m.Type(), code, reason)
		}
	}
	if !gotResp || !gotIntro {
		t.Fatalf("client got response %v, INTRODUCE %v; want both", gotResp, gotIntro)
	}
	h.peer.expectIntroduce(h.peer.read(), stun.KindAttemptHost, a, &hostCap, client.addr(), clientLAN)
	return hostCap
}

func TestE2EFlow(t *testing.T) { eachStore(t, e2eFlow) }

// e2eFlow runs the whole flow on a server started with storeArgs.
func e2eFlow(t *testing.T, storeArgs []string) {
	p := startProc(t, append([]string{"--drain-window", "30s"}, storeArgs...)...)
	var secrets, caps []string
	for _, tok := range p.tokens {
		secrets = append(secrets, tok)
	}
	if p.mediator != p.udpAddrs[0] {
		t.Fatalf("mediator %q, want the bound UDP address %q", p.mediator, p.udpAddrs[0])
	}
	p.call("GET", "/livez", "", nil).expect(t, "livez", http.StatusOK, nil)
	p.call("GET", "/readyz", "", nil).expect(t, "readyz", http.StatusOK, nil)

	// Publish; an exact replay returns the same listing.
	pub := p.publish("e2e-listing-1", "E2E host")
	caps = append(caps, pub.Lease.Token, pub.Presence.Token)
	r := p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("E2E host"), "Idempotency-Key", "e2e-listing-1")
	var again published
	r.expect(t, "publish replay", http.StatusOK, &again)
	if r.header.Get("Idempotent-Replay") != "true" || again.ListingID != pub.ListingID {
		t.Fatalf("replay: header %q, listing %s, want true and %s", r.header.Get("Idempotent-Replay"), again.ListingID, pub.ListingID)
	}

	// Without presence the listing is not browsable.
	var page browsePage
	p.call("GET", "/v1/listings?protocol_version=7", p.tokens["client"], nil).expect(t, "browse before presence", http.StatusOK, &page)
	if len(page.Items) != 0 {
		t.Fatalf("browse before presence shows %d items, want 0", len(page.Items))
	}

	// Presence refresh from the host's socket.
	h := &host{pub: pub, presence: mustHandle(t, pub.Presence.Handle), cap: mustToken(t, pub.Presence.Token), peer: newPeer(t, pub.Presence.Mediator)}
	if m := h.refresh(); m.NumAttempts() != 0 {
		t.Fatalf("presence names %d pending attempts, want 0", m.NumAttempts())
	}

	// Browse shows it now.
	p.call("GET", "/v1/listings?protocol_version=7", p.tokens["client"], nil).expect(t, "browse", http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].ListingID != pub.ListingID || page.NextAfter != nil {
		t.Fatalf("browse: %+v, want exactly listing %s", page, pub.ListingID)
	}
	p.call("GET", "/v1/listings/"+pub.ListingID, p.tokens["client"], nil).expect(t, "get", http.StatusOK, nil)

	// Join: the host is offered the attempt, and a refresh lists it as pending.
	j := p.join("e2e-join-1", pub.ListingID)
	caps = append(caps, j.Token)
	a := mustHandle(t, j.Handle)
	h.offered(a)
	m := h.refresh()
	if got, ok := m.Attempt(); m.NumAttempts() != 1 || !ok || got != a {
		t.Fatalf("presence lists %d pending attempts (first %v), want exactly %v", m.NumAttempts(), got, a)
	}

	// Both bind and are introduced to each other's bind source.
	hostCap := introduce(t, h, newPeer(t, j.Mediator), j)
	caps = append(caps, string(hostCap.AppendToken(nil)))

	// A plain Binding works for any STUN client.
	tx := h.peer.plainBinding()
	pm := h.peer.read()
	h.peer.checkTx(pm, tx)
	if got, ok := pm.XORAddress(stun.AttrXORMappedAddress); pm.Type() != stun.BindingSuccess || !ok || got != h.peer.addr() {
		t.Fatalf("plain Binding: type %#x, address %v, want success naming %v", pm.Type(), got, h.peer.addr())
	}

	// Delete: the listing and its presence are gone.
	p.call("DELETE", "/v1/listings/"+pub.ListingID, p.tokens["publisher"], nil,
		"Lease-Id", pub.Lease.LeaseID, "Lease-Token", pub.Lease.Token).expect(t, "delete", http.StatusNoContent, nil)
	if code := p.call("GET", "/v1/listings/"+pub.ListingID, p.tokens["client"], nil).problemCode(t); code != "not_found" {
		t.Fatalf("get after delete: code %q, want not_found", code)
	}
	h.seq++
	tx = h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	em := h.peer.readSigned(stun.BindingError, &h.cap)
	h.peer.checkTx(em, tx)
	if code, _, _ := em.ErrorCode(); code != stun.CodeNotFound {
		t.Fatalf("presence after delete: error %d, want 404", code)
	}

	// Drain: a second listing with an attempt in flight keeps the process
	// up; readiness turns 503 at once and new work is refused, while the
	// attempt may still finish. Then the process exits 0 on its own.
	h2 := publishHost(t, p, "e2e-listing-2", "E2E host 2")
	caps = append(caps, h2.pub.Lease.Token, h2.pub.Presence.Token)
	j2 := p.join("e2e-join-2", h2.pub.ListingID)
	caps = append(caps, j2.Token)
	h2.offered(mustHandle(t, j2.Handle))

	p.signal(syscall.SIGTERM)
	p.waitReadiness(http.StatusServiceUnavailable)
	p.call("GET", "/livez", "", nil).expect(t, "livez while draining", http.StatusOK, nil)
	if r := p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("late"), "Idempotency-Key", "e2e-late"); r.status != http.StatusServiceUnavailable || r.problemCode(t) != "draining" {
		t.Fatalf("publish while draining: %d %s, want 503 draining", r.status, r.body)
	}
	hostCap2 := introduce(t, h2, newPeer(t, j2.Mediator), j2)
	caps = append(caps, string(hostCap2.AppendToken(nil)))

	if code := p.wait(); code != 0 {
		t.Fatalf("exit status %d, want 0; log:\n%s", code, p.stderr.String())
	}
	fin := p.logged("drain finished")
	if fin == nil || fin["reason"] != "idle" {
		t.Fatalf("drain finished line %v, want reason idle (the in-flight attempt finished)", fin)
	}
	if p.logged("stopped") == nil {
		t.Fatalf("no stopped line in the log")
	}
	p.assertNoSecrets(append(secrets, caps...), caps)
}

// drainWithAttemptInFlight starts the server with the drain window given,
// publishes a host and offers it a join that never binds, then starts the
// drain with sig and waits until readiness answers 503.
func drainWithAttemptInFlight(t *testing.T, storeArgs []string, window, key string, sig syscall.Signal) (*proc, *host, joined) {
	t.Helper()
	p := startProc(t, append(storeArgs, "--drain-window", window)...)
	h := publishHost(t, p, key+"-1", "Draining host "+key)
	j := p.join(key+"-join-1", h.pub.ListingID)
	h.offered(mustHandle(t, j.Handle))
	p.signal(sig)
	p.waitReadiness(http.StatusServiceUnavailable)
	return p, h, j
}

func TestE2EDrainWindowEnds(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p, h, j := drainWithAttemptInFlight(t, storeArgs, "1s", "window", syscall.SIGINT)
		if code := p.wait(); code != 0 {
			t.Fatalf("exit status %d, want 0; log:\n%s", code, p.stderr.String())
		}
		fin := p.logged("drain finished")
		if fin == nil || fin["reason"] != "window" {
			t.Fatalf("drain finished line %v, want reason window (the attempt never bound)", fin)
		}
		p.assertNoSecrets([]string{p.tokens["publisher"], p.tokens["client"], p.tokens["operator"], p.tokens[httpapi.DevGlobalOperator], j.Token, h.pub.Lease.Token, h.pub.Presence.Token},
			[]string{j.Token, h.pub.Lease.Token, h.pub.Presence.Token})
	})
}

func TestE2EIdleExit(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		p.signal(syscall.SIGTERM)
		if code := p.wait(); code != 0 {
			t.Fatalf("exit status %d, want 0; log:\n%s", code, p.stderr.String())
		}
		if fin := p.logged("drain finished"); fin == nil || fin["reason"] != "idle" {
			t.Fatalf("drain finished line %v, want reason idle", fin)
		}
	})
}

func TestE2ESecondSignalExitsAtOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p, _, _ := drainWithAttemptInFlight(t, storeArgs, "30s", "second", syscall.SIGTERM)
		p.signal(syscall.SIGTERM)
		// Had the second signal been ignored, the drain would end at the window
		// with status 0 and a "drain finished" line.
		if code := p.wait(); code != exitFailure {
			t.Fatalf("exit status %d, want %d; log:\n%s", code, exitFailure, p.stderr.String())
		}
		if p.logged("drain finished") != nil || p.logged("second signal: exiting at once") == nil {
			t.Fatalf("log does not show an immediate exit:\n%s", p.stderr.String())
		}
	})
}

func TestE2EDualStackUDP(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, append(storeArgs, "--udp-addr", "127.0.0.1:0,[::1]:0")...)
		if len(p.udpAddrs) != 2 {
			t.Fatalf("first log line names UDP %v, want two addresses", p.udpAddrs)
		}
		for _, addr := range p.udpAddrs {
			u := newPeer(t, addr)
			tx := u.plainBinding()
			m := u.read()
			u.checkTx(m, tx)
			if got, ok := m.XORAddress(stun.AttrXORMappedAddress); m.Type() != stun.BindingSuccess || !ok || got != u.addr() {
				t.Fatalf("plain Binding on %s: type %#x, address %v, want success naming %v", addr, m.Type(), got, u.addr())
			}
		}
		p.signal(syscall.SIGTERM)
		if code := p.wait(); code != 0 {
			t.Fatalf("exit status %d, want 0", code)
		}
	})
}

// TestE2EBadSettingStopsStart runs on no store: the settings are checked
// before any store is opened.
func TestE2EBadSettingStopsStart(t *testing.T) {
	f := func(env []string, args []string, setting string) {
		t.Helper()
		code, stdout, stderr := runBinary(t, env, append([]string{"--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, args...)...)
		if code != exitUsage {
			t.Fatalf("%v %v: exit status %d, want %d; stderr %s", env, args, code, exitUsage, stderr)
		}
		if !strings.Contains(stderr, "invalid "+setting) {
			t.Fatalf("%v %v: stderr %q does not name %s", env, args, stderr, setting)
		}
		if strings.Contains(stderr, "listening") || stdout != "" {
			t.Fatalf("%v %v: the server started anyway: %s %s", env, args, stdout, stderr)
		}
	}
	f([]string{"RDV_MAX_LISTINGS=0"}, nil, "max-listings (RDV_MAX_LISTINGS)")
	f(nil, []string{"--lease-ttl", "61s"}, "lease-ttl (flag --lease-ttl)")
	f([]string{"RDV_LEASE_TTL=61s"}, []string{"--lease-ttl", "0s"}, "lease-ttl (flag --lease-ttl)")
	f([]string{"RDV_DRAIN_WINDOW=forever"}, nil, "drain-window (RDV_DRAIN_WINDOW)")
	f(nil, []string{"--udp-sockets", "-1"}, "udp-sockets")
	f(nil, []string{"--log-format", "xml"}, "log-format")
}

func TestE2EHelp(t *testing.T) {
	code, stdout, _ := runBinary(t, nil, "--help")
	if code != 0 {
		t.Fatalf("--help: exit status %d", code)
	}
	fs := newFlagSet(&config{})
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(stdout, "--"+f.Name) || !strings.Contains(stdout, envName(f.Name)) {
			t.Errorf("--help does not document --%s and %s", f.Name, envName(f.Name))
		}
	})
}
