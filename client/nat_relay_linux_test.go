//go:build linux

package client

import (
	"cmp"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNATRelay runs the relay fallback through the namespaces of
// TestNATHolePunch, with Debian's coturn (use-auth-secret) on 10.99.0.2 in
// pub and the server granting credentials for it (--turn-uri,
// --turn-secret-file). Each case has its own namespaces and runs in
// parallel with the others; every punch timeout is 2 s.
//   - symmetric: both NATs fully-random, so the direct punch fails; the
//     peers fall back to the relay and chat through it.
//   - endpoint-independent: the peers still connect directly, and not one
//     datagram reaches the relay (nft counter).
//   - relay-only: a direct path exists, but the joiner asks --relay-only:
//     the peers connect through the relay, neither side is told the other's
//     public or LAN address (no INTRODUCE left the server, what each side
//     printed names only relayed addresses), and no datagram flowed
//     directly between the NATs.
//   - wrong-secret: coturn's secret is not the server's, so the relay
//     refuses the credentials: both sides fail with the typed
//     ErrRelayRefused (TURN 401, an answer, not a timeout); the joiner
//     exits 6.
//   - expired-credential: a credential is granted only while its attempt
//     lives (and expires --turn-ttl after it): with 4 s attempts the
//     joiner punches directly for 16 s between NATs that defeat it, so
//     when it falls back its attempt has ended and the server grants no
//     credential (404): the joiner fails with the punch's error and the
//     refusal (exit 3); the host (2 s, its credential asked in time) fails at
//     the end of its own with ErrPunchFailed and ErrIntroduceTimeout (no
//     relayed address came). (coturn's refusal of an expired credential:
//     internal/turncred's TestCoturnAcceptsIssuedCredentials.)
func TestNATRelay(t *testing.T) {
	requireNetns(t)
	requireCoturn(t)
	t.Run("symmetric", func(t *testing.T) {
		t.Parallel()
		r := startRelayLab(t, 'r', true, "")
		host, join, code := r.chat(t)
		if code != 0 {
			t.Fatalf("the joiner exited %d:\n%s\n%s", code, join.stdout.String(), join.stderr.String())
		}
		out := join.stdout.String()
		for _, want := range []string{"introduced to host: public 10.99.1.2:", "connected: relayed path through the TURN relay to the peer's relayed address 10.99.0.2:", "host says: echo: hello", "host says: echo: world"} {
			if !strings.Contains(out, want) {
				t.Fatalf("joiner output lacks %q:\n%s", want, out)
			}
		}
		host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.0\.2:\d+ says: world$`))
		if n := r.counter("to_relay"); n == 0 {
			t.Fatalf("no datagram reached the relay")
		}
		r.noPeerTrafficAtServer(t)
	})
	t.Run("endpoint-independent", func(t *testing.T) {
		t.Parallel()
		r := startRelayLab(t, 'd', false, "")
		host, join, code := r.chat(t)
		out := join.stdout.String()
		if code != 0 || !strings.Contains(out, "punched: direct path to 10.99.1.2:") {
			t.Fatalf("the joiner exited %d, want a direct path:\n%s\n%s", code, out, join.stderr.String())
		}
		host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.2\.2:\d+ says: world$`))
		if n := r.counter("to_relay"); n != 0 {
			t.Fatalf("%d datagrams reached the relay on a direct path", n)
		}
		if r.counter("direct_1to2") == 0 || r.counter("direct_2to1") == 0 {
			t.Fatalf("no direct traffic between the NATs")
		}
		r.noPeerTrafficAtServer(t)
	})
	t.Run("relay-only", func(t *testing.T) {
		t.Parallel()
		r := startRelayLab(t, 'o', false, "")
		host, join, code := r.chat(t, "--relay-only")
		out := join.stdout.String()
		if code != 0 {
			t.Fatalf("the joiner exited %d:\n%s\n%s", code, out, join.stderr.String())
		}
		for _, want := range []string{"introduced to host: relay-only (no peer address revealed)", "connected: relayed path through the TURN relay to the peer's relayed address 10.99.0.2:", "host says: echo: world"} {
			if !strings.Contains(out, want) {
				t.Fatalf("joiner output lacks %q:\n%s", want, out)
			}
		}
		host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.0\.2:\d+ says: world$`))
		hostOut := host.stdout.String()
		if !strings.Contains(hostOut, "joiner introduced: relay-only (no peer address revealed)") {
			t.Fatalf("host output:\n%s", hostOut)
		}
		// What each side received: only relayed addresses, never the
		// other's NAT (public) or LAN address.
		for _, leak := range []string{"10.99.1.2", "192.168.1."} {
			if strings.Contains(out, leak) {
				t.Fatalf("the joiner learnt the host's address %s:\n%s", leak, out)
			}
		}
		for _, leak := range []string{"10.99.2.2", "192.168.2."} {
			if strings.Contains(hostOut, leak) {
				t.Fatalf("the host learnt the joiner's address %s:\n%s", leak, hostOut)
			}
		}
		if n := r.counter("introduce_sent"); n != 0 {
			t.Fatalf("the server sent %d INTRODUCE datagrams for a relay-only attempt", n)
		}
		if n := r.counter("relay_introduce_sent"); n < 2 {
			t.Fatalf("the server sent %d RELAY-INTRODUCE datagrams, want one to each side at least", n)
		}
		if a, b := r.counter("direct_1to2"), r.counter("direct_2to1"); a != 0 || b != 0 {
			t.Fatalf("datagrams flowed directly between the peers' NATs (1→2 %d, 2→1 %d)", a, b)
		}
		r.noPeerTrafficAtServer(t)
	})
	t.Run("wrong-secret", func(t *testing.T) {
		t.Parallel()
		r := startRelayLab(t, 'w', false, "not-the-relays-secret")
		host, join, code := r.chat(t, "--relay-only")
		errOut := join.stderr.String()
		if code != 6 || !strings.Contains(errOut, "relay refused the credentials") || !strings.Contains(errOut, "error 401") {
			t.Fatalf("the joiner exited %d, want 6 with the relay's 401 refusal:\n%s\n%s", code, join.stdout.String(), errOut)
		}
		host.waitLine(t, regexp.MustCompile(`^punch to joiner failed: .*error 401`))
	})
	t.Run("expired-credential", func(t *testing.T) {
		t.Parallel()
		r := startRelayLab(t, 'x', true, "", "--turn-ttl", "10s", "--attempt-ttl", "4s")
		host, join, code := r.chat(t, "--punch-timeout", "16s")
		errOut := join.stderr.String()
		if code != 3 || !strings.Contains(errOut, "hole punch failed") || !strings.Contains(errOut, "get client relay: HTTP 404 not_found") {
			t.Fatalf("the joiner exited %d, want 3 with no credential for its ended attempt:\n%s\n%s", code, join.stdout.String(), errOut)
		}
		host.waitLine(t, regexp.MustCompile(`^punch to joiner failed: .*hole punch failed.*; relay fallback failed: .*no introduction`))
	})
}

// relayLab is a lab with coturn on 10.99.0.2 and the server granting
// relay credentials for it.
type relayLab struct {
	*lab
	srv *testServer
}

// startRelayLab builds the namespaces (both NATs fully-random when
// symmetric) and starts coturn and the server; serverSecret, if set, is a
// secret other than coturn's; serverArgs are more server flags.
func startRelayLab(t *testing.T, tag byte, symmetric bool, serverSecret string, serverArgs ...string) *relayLab {
	l := newLab(t, tag, symmetric, symmetric)
	const relaySecret = "nat-relay-test-secret"
	startCoturn(t, l.Exec("pub"), netip.MustParseAddr("10.99.0.2"), 3478, relaySecret)
	secretFile := filepath.Join(t.TempDir(), "turn-secret")
	if err := os.WriteFile(secretFile, []byte(cmp.Or(serverSecret, relaySecret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, l.Exec("pub"), append([]string{"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478",
		"--turn-uri", "turn:10.99.0.2:3478?transport=udp", "--turn-secret-file", secretFile,
		"--relay-allow-peers", "10.99.0.0/16"}, serverArgs...)...) // the lab relay is on a private range
	return &relayLab{lab: l, srv: srv}
}

// chat runs an echoing host and a joiner saying two lines (with extra
// join flags) and returns them with the joiner's exit status.
func (r *relayLab) chat(t *testing.T, extra ...string) (host, join *peerProc, code int) {
	server := "http://10.99.0.1:8080"
	host = startPeer(t, r.Exec("host"), r.srv.tokens["publisher"], "host", "--server", server, "--name", "relay test", "--echo", "--punch-timeout", "2s")
	id := host.waitLine(t, publishedRe)
	args := append([]string{"join", "--server", server, "--listing", id,
		"--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "2s"}, extra...)
	join = startPeer(t, r.Exec("join"), r.srv.tokens["client"], args...)
	return host, join, join.wait(t)
}

// noPeerTrafficAtServer: the server saw only STUN, never the peers' chat.
func (r *relayLab) noPeerTrafficAtServer(t *testing.T) {
	if n := r.counter("to_server_nonstun"); n != 0 {
		t.Fatalf("the server received %d non-STUN datagrams: peer traffic went through it", n)
	}
}
