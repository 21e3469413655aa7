//go:build linux

package client

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// TestNATCLibHostGoJoiner is TestNATHolePunch's endpoint-independent case
// with the C library on the host's side: sdk/c's example host (rdv_peer)
// in the host namespace behind nat1, the Go rendezvous-peer joiner behind
// nat2, speaking rendezvous-peer's chat (rdv_peer --chat). They must punch
// through both NATs and exchange datagrams directly,
// with none of that traffic reaching the server.
func TestNATCLibHostGoJoiner(t *testing.T) {
	l, srv, _, _, id, hostOut := startNATCHost(t, 'C', true)
	join := startPeer(t, l.Exec("join"), srv.tokens["client"], "join", "--server", "http://10.99.0.1:8080",
		"--listing", id, "--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "3s")
	code := join.wait(t)
	jout, jerr := join.stdout.String(), join.stderr.String()
	if code != 0 {
		t.Fatalf("the Go joiner exited %d:\n%s\n%s", code, jout, jerr)
	}
	for _, want := range []string{"introduced to host: public 10.99.1.2:", "punched: direct path to 10.99.1.2:",
		"host says: echo: hello", "host says: echo: world"} {
		if !strings.Contains(jout, want) {
			t.Fatalf("joiner output lacks %q:\n%s", want, jout)
		}
	}
	if !regexp.MustCompile(`(?m)^connected \S+ 10\.99\.2\.2:\d+ path=1`).MatchString(hostOut.String()) {
		t.Fatalf("the C host did not connect to the joiner's NAT endpoint:\n%s", hostOut.String())
	}
	requireDirectOnly(t, l)
}

// TestNATCLibHostCJoiner: both sides are the C library, behind
// endpoint-independent NATs; the joiner creates its attempt over REST
// (curl in its namespace) and its datagram comes back through the host's
// echo on the direct path.
func TestNATCLibHostCJoiner(t *testing.T) {
	l, srv, dir, bin, id, hostOut := startNATCHost(t, 'K', false)
	jout, err := cJoinInLab(t, l, srv, bin, dir, id, "nat-clib-cc-1", `{"protocol_version":7}`)
	if err != nil || !regexp.MustCompile(`(?m)^connected \S+ 10\.99\.1\.2:\d+ path=1`).Match(jout) ||
		!strings.Contains(string(jout), "got echo: hello from c") || strings.Contains(string(jout), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nC host:\n%s", err, jout, hostOut.String())
	}
	requireDirectOnly(t, l)
}

// TestNATCLibGoHostCJoiner is the other way round from
// TestNATCLibHostGoJoiner: the Go rendezvous-peer host behind nat1, the C
// example joiner behind nat2 (chatting in rendezvous-peer's line protocol),
// both NATs endpoint-independent: they punch and chat directly, and the
// server sees none of it.
func TestNATCLibGoHostCJoiner(t *testing.T) {
	requireNetns(t)
	l := newLab(t, 'G', false, false)
	srv := startServer(t, l.Exec("pub"), "--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478")
	dir := t.TempDir()
	bin := buildCPeerIn(t, dir)
	host := startPeer(t, l.Exec("host"), srv.tokens["publisher"], "host", "--server", "http://10.99.0.1:8080",
		"--name", "Go host for C", "--echo")
	id := host.waitLine(t, publishedRe)
	jout, err := cJoinInLab(t, l, srv, bin, dir, id, "nat-clib-gc-1", `{"protocol_version":7}`, "--chat")
	if err != nil || !regexp.MustCompile(`(?m)^connected \S+ 10\.99\.1\.2:\d+ path=1`).Match(jout) ||
		!strings.Contains(string(jout), "got echo: hello from c") || strings.Contains(string(jout), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nGo host:\n%s", err, jout, host.stdout.String())
	}
	host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.2\.2:\d+ says: hello from c$`))
	requireDirectOnly(t, l)
}

// cJoinInLab creates a join attempt of listing id from the joiner's
// namespace over REST (curl, idempotency key key, request body body) and
// runs the C example joiner behind nat2 with the answer's fields (the relay
// credential too for a relay-only attempt) and extra flags until it exits.
// It gets --api and the client's token (RDV_TOKEN), so it fetches its relay
// credential itself if its direct punch fails. It returns the joiner's
// output and how it exited.
func cJoinInLab(t *testing.T, l *lab, srv *testServer, bin, dir, id, key, body string, extra ...string) ([]byte, error) {
	t.Helper()
	const api = "http://10.99.0.1:8080"
	out := curlIn(t, l, "join", dir, srv.tokens["client"], key, body, api+"/v1/listings/"+id+"/join-attempts")
	var at struct {
		AttemptID string `json:"attempt_id"`
		Handle    string `json:"handle"`
		Token     string `json:"token"`
		Mediator  string `json:"mediator"`
		RelayOnly bool   `json:"relay_only"`
		Relay     *struct {
			URLs       []string `json:"urls"`
			Username   string   `json:"username"`
			Credential string   `json:"credential"`
		} `json:"relay"`
	}
	if err := json.Unmarshal(out, &at); err != nil || at.Mediator == "" || at.RelayOnly != (at.Relay != nil) {
		t.Fatalf("join answer: %v (relay-only %v, relay %v)", err, at.RelayOnly, at.Relay != nil)
	}
	args := append([]string{"join", "--listen", "0.0.0.0:0", "--mediator", at.Mediator, "--handle", at.Handle,
		"--token", at.Token, "--api", api, "--attempt", at.AttemptID, "--seconds", "20"}, extra...)
	if r := at.Relay; r != nil {
		if len(r.URLs) != 1 {
			t.Fatalf("relay URLs %v, want one", r.URLs)
		}
		relay := strings.TrimSuffix(strings.TrimPrefix(r.URLs[0], "turn:"), "?transport=udp")
		args = append(args, "--relay", relay, "--relay-user", r.Username, "--relay-credential", r.Credential)
	}
	cmd := l.Command("join", append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), "RDV_TOKEN="+srv.tokens["client"]) // not a flag: flags show in ps
	return cmd.CombinedOutput()
}

// startNATCHost starts a lab (tag names its namespaces) with the server in
// pub, builds the C example into a test directory and runs it as the host
// behind nat1 (startCHostInLab). It returns the lab, the server, that
// directory, the binary, the listing ID and the host's output.
func startNATCHost(t *testing.T, tag byte, chat bool) (*lab, *testServer, string, string, string, *e2e.LockedBuffer) {
	t.Helper()
	requireNetns(t)
	l := newLab(t, tag, false, false)
	srv := startServer(t, []string{"ip", "netns", "exec", l.NS("pub")},
		"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478")
	dir := t.TempDir()
	bin := buildCPeerIn(t, dir)
	id, hostOut := startCHostInLab(t, l, srv, bin, dir, chat)
	return l, srv, dir, bin, id, hostOut
}

// requireDirectOnly: the peers' traffic crossed between the NATs both ways
// and none but STUN reached the server.
func requireDirectOnly(t *testing.T, l *lab) {
	t.Helper()
	if l.counter("direct_1to2") == 0 || l.counter("direct_2to1") == 0 {
		t.Fatalf("no direct traffic between the NATs (1→2 %d, 2→1 %d)", l.counter("direct_1to2"), l.counter("direct_2to1"))
	}
	if n := l.counter("to_server_nonstun"); n != 0 {
		t.Fatalf("the server received %d non-STUN datagrams: peer traffic went through it", n)
	}
}

// curlIn makes a REST call from namespace ns with curl (the game's own HTTP
// client): the token and idempotency key go in a header file, never on a
// command line. It returns the answer's body.
func curlIn(t *testing.T, l *lab, ns, dir, token, key, body, url string) []byte {
	t.Helper()
	hdr := filepath.Join(dir, "auth-"+key)
	if err := os.WriteFile(hdr, []byte("Authorization: Bearer "+token+"\nIdempotency-Key: "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ip", "netns", "exec", l.NS(ns), "curl", "-sf", "-X", "POST", "-H", "@"+hdr,
		"-H", "Content-Type: application/json", "--data", body, url).Output()
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return out
}

// startCHostInLab publishes a listing from the host namespace and runs the
// C example host behind nat1 (chat: rendezvous-peer's line protocol) until
// its first presence refresh; it returns the listing ID and its output.
// The host gets --api and the publisher's token (RDV_TOKEN), so it fetches
// its relay credential for a relay-only attempt or after a failed punch.
func startCHostInLab(t *testing.T, l *lab, srv *testServer, bin, dir string, chat bool) (string, *e2e.LockedBuffer) {
	t.Helper()
	body := `{"region":"eu-central","protocol_version":7,"build_version":"1.2.3","display_name":"C host behind NAT",` +
		`"visibility":"public","trust_mode":"player_hosted","current_players":1,"max_players":4}`
	out := curlIn(t, l, "host", dir, srv.tokens["publisher"], "nat-clib-host", body, "http://10.99.0.1:8080/v1/listings")
	var pub struct {
		ListingID string `json:"listing_id"`
		Presence  struct {
			Handle   string `json:"handle"`
			Token    string `json:"token"`
			Mediator string `json:"mediator"`
		} `json:"presence"`
	}
	if err := json.Unmarshal(out, &pub); err != nil || pub.Presence.Mediator == "" {
		t.Fatalf("create listing answer: %v", err)
	}
	args := []string{bin, "host", "--listen", "0.0.0.0:0", "--mediator", pub.Presence.Mediator,
		"--handle", pub.Presence.Handle, "--token", pub.Presence.Token, "--interval", "5", "--seconds", "30",
		"--api", "http://10.99.0.1:8080", "--listing", pub.ListingID}
	if chat {
		args = append(args, "--chat")
	}
	host := l.Command("host", args...)
	host.Env = append(os.Environ(), "RDV_TOKEN="+srv.tokens["publisher"])
	hostOut, hostErr := &e2e.LockedBuffer{}, &e2e.LockedBuffer{} // written by exec while the test reads
	host.Stdout, host.Stderr = hostOut, hostErr
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		host.Process.Kill()
		host.Wait()
		if t.Failed() || strings.Contains(hostErr.String(), "Sanitizer") {
			t.Errorf("C host output:\n%s\nstderr:\n%s", hostOut.String(), hostErr.String())
		}
	})
	// A listing is found once its host's presence is first refreshed.
	for deadline := time.Now().Add(hangGuard); !strings.Contains(hostOut.String(), "presence "); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the C host never refreshed its presence")
		}
	}
	return pub.ListingID, hostOut
}
