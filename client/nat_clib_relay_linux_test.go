//go:build linux

package client

import (
	"strings"
	"testing"
)

// TestNATCLibRelayOnly is TestNATRelay's relay-only case with the C
// library joining, behind symmetric NATs on both sides: the C example
// joiner (rdv_peer) creates a relay-only attempt over REST (curl, in its
// namespace), allocates on coturn with the credential of the answer and
// chats with the Go rendezvous-peer host through the relay. No datagram
// may cross directly between the NATs, no INTRODUCE is sent, and neither
// side learns the other's address.
func TestNATCLibRelayOnly(t *testing.T) {
	r, dir, bin := startCRelayLab(t, 'O', true)
	host := startPeer(t, r.Exec("host"), r.srv.tokens["publisher"], "host", "--server", "http://10.99.0.1:8080",
		"--name", "relay C test", "--echo", "--punch-timeout", "2s")
	id := host.waitLine(t, publishedRe)
	jout, err := cJoinInLab(t, r.lab, r.srv, bin, dir, id, "nat-clib-relay-1", `{"protocol_version":7,"relay_only":true}`, "--chat")
	if err != nil || !strings.Contains(string(jout), "path=2") || !strings.Contains(string(jout), "got echo: hello from c") ||
		strings.Contains(string(jout), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nhost:\n%s", err, jout, host.stdout.String())
	}
	requireNoAddressLeak(t, "the C joiner", string(jout), "the host", "10.99.1.2", "192.168.1.")
	requireNoAddressLeak(t, "the host", host.stdout.String(), "the C joiner", "10.99.2.2", "192.168.2.")
	r.requireRelayOnly(t)
}

// TestNATCLibHostRelayOnly is the relay-only path with the C library on
// the host's side, behind endpoint-independent NATs (a direct path would
// work): the Go rendezvous-peer joiner asks --relay-only, the C example
// host learns it from the bind's answer (RDV_EV_RELAY_ONLY), fetches the
// host's relay credential over REST, allocates on coturn and chats through
// it. No datagram crosses directly between the NATs, no INTRODUCE is sent,
// and neither side learns the other's address.
func TestNATCLibHostRelayOnly(t *testing.T) {
	r, dir, bin := startCRelayLab(t, 'Q', false)
	id, hostOut := startCHostInLab(t, r.lab, r.srv, bin, dir, true)
	join := startPeer(t, r.Exec("join"), r.srv.tokens["client"], "join", "--server", "http://10.99.0.1:8080", "--listing", id,
		"--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "2s", "--relay-only")
	if code := join.wait(t); code != 0 {
		t.Fatalf("the Go joiner exited %d:\n%s\n%s", code, join.stdout.String(), join.stderr.String())
	}
	out := join.stdout.String()
	for _, want := range []string{"introduced to host: relay-only (no peer address revealed)",
		"connected: relayed path through the TURN relay to the peer's relayed address 10.99.0.2:", "host says: echo: world"} {
		if !strings.Contains(out, want) {
			t.Fatalf("joiner output lacks %q:\n%s", want, out)
		}
	}
	requireLines(t, "C host", hostOut.String, `relay-only \S+`, `relay \S+ via 10\.99\.0\.2:3478`, `connected \S+ 10\.99\.0\.2:\d+ path=2 .*`)
	requireNoAddressLeak(t, "the Go joiner", out, "the host", "10.99.1.2", "192.168.1.")
	requireNoAddressLeak(t, "the C host", hostOut.String(), "the joiner", "10.99.2.2", "192.168.2.")
	r.requireRelayOnly(t)
}

// TestNATCLibSymmetricRelayed: both sides are the C library, behind
// symmetric (fully-random) NATs, so the direct punch fails. Each side's
// library asks for the relay (RDV_EV_RELAY_FALLBACK), the example fetches
// its side's credential over REST (the joiner's from
// /v1/join-attempts/{id}/relay, the host's from its listing's route), and
// the two connect through coturn: the joiner's datagram comes back through
// the host's echo on the relayed path, and the server sees none of it.
func TestNATCLibSymmetricRelayed(t *testing.T) {
	r, dir, bin := startCRelayLab(t, 'Y', true)
	id, hostOut := startCHostInLab(t, r.lab, r.srv, bin, dir, false)
	jout, err := cJoinInLab(t, r.lab, r.srv, bin, dir, id, "nat-clib-sym-1", `{"protocol_version":7}`)
	if err != nil || strings.Contains(string(jout), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nC host:\n%s", err, jout, hostOut.String())
	}
	// Introduced to the host's NAT endpoint first; then the fallback.
	fallback := []string{`relay-fallback \S+`, `relay \S+ via 10\.99\.0\.2:3478`, `connected \S+ 10\.99\.0\.2:\d+ path=2 .*`}
	requireLines(t, "C joiner", func() string { return string(jout) }, append([]string{`introduced \S+ 10\.99\.1\.2:\d+`}, append(fallback, `got echo: hello from c`)...)...)
	requireLines(t, "C host", hostOut.String, fallback...)
	if n := r.counter("relay_introduce_sent"); n < 2 {
		t.Fatalf("the server sent %d RELAY-INTRODUCE datagrams, want one to each side at least", n)
	}
	if n := r.counter("to_relay"); n == 0 {
		t.Fatal("no datagram reached the relay")
	}
	r.noPeerTrafficAtServer(t)
}

// startCRelayLab is startRelayLab (symmetric: both NATs fully-random) with
// the C example built into a test directory; it returns the lab, that
// directory and the binary.
func startCRelayLab(t *testing.T, tag byte, symmetric bool) (*relayLab, string, string) {
	t.Helper()
	requireNetns(t)
	requireCoturn(t)
	r := startRelayLab(t, tag, symmetric, "")
	dir := t.TempDir()
	return r, dir, buildCPeerIn(t, dir)
}

// requireNoAddressLeak fails when what side printed names one of other's
// addresses (its NAT's public one or a LAN prefix).
func requireNoAddressLeak(t *testing.T, side, printed, other string, addrs ...string) {
	t.Helper()
	for _, a := range addrs {
		if strings.Contains(printed, a) {
			t.Fatalf("%s learnt %s's address %s:\n%s", side, other, a, printed)
		}
	}
}

// requireRelayOnly: the attempt went through the relay without an
// INTRODUCE, RELAY-INTRODUCE reached both sides, and no datagram crossed
// directly between the NATs or reached the server but STUN.
func (r *relayLab) requireRelayOnly(t *testing.T) {
	t.Helper()
	if n := r.counter("introduce_sent"); n != 0 {
		t.Fatalf("the server sent %d INTRODUCE datagrams for a relay-only attempt", n)
	}
	if n := r.counter("relay_introduce_sent"); n < 2 {
		t.Fatalf("the server sent %d RELAY-INTRODUCE datagrams, want one to each side at least", n)
	}
	if n := r.counter("to_relay"); n == 0 {
		t.Fatal("no datagram reached the relay")
	}
	if a, b := r.counter("direct_1to2"), r.counter("direct_2to1"); a != 0 || b != 0 {
		t.Fatalf("datagrams flowed directly between the peers' NATs (1→2 %d, 2→1 %d)", a, b)
	}
	r.noPeerTrafficAtServer(t)
}
