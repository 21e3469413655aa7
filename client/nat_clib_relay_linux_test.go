//go:build linux

package client

import (
	"encoding/json"
	"os/exec"
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
	requireNetns(t)
	requireCoturn(t)
	r := startRelayLab(t, 'O', true, "")
	dir := t.TempDir()
	bin := buildCPeerIn(t, dir)
	server := "http://10.99.0.1:8080"
	host := startPeer(t, r.Exec("host"), r.srv.tokens["publisher"], "host", "--server", server, "--name", "relay C test",
		"--echo", "--punch-timeout", "2s")
	id := host.waitLine(t, publishedRe)

	out := curlIn(t, r.lab, "join", dir, r.srv.tokens["client"], "nat-clib-relay-1", `{"protocol_version":7,"relay_only":true}`,
		server+"/v1/listings/"+id+"/join-attempts")
	var at struct {
		Handle    string `json:"handle"`
		Token     string `json:"token"`
		Mediator  string `json:"mediator"`
		RelayOnly bool   `json:"relay_only"`
		Relay     struct {
			URLs       []string `json:"urls"`
			Username   string   `json:"username"`
			Credential string   `json:"credential"`
		} `json:"relay"`
	}
	if err := json.Unmarshal(out, &at); err != nil || !at.RelayOnly || len(at.Relay.URLs) != 1 {
		t.Fatalf("join answer: %v (relay-only %v)", err, at.RelayOnly)
	}
	relay := strings.TrimSuffix(strings.TrimPrefix(at.Relay.URLs[0], "turn:"), "?transport=udp")
	cmd := exec.Command("ip", "netns", "exec", r.NS("join"), bin, "join", "--listen", "0.0.0.0:0", "--chat",
		"--mediator", at.Mediator, "--handle", at.Handle, "--token", at.Token,
		"--relay", relay, "--relay-user", at.Relay.Username, "--relay-credential", at.Relay.Credential, "--seconds", "20")
	jout, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(jout), "path=2") || !strings.Contains(string(jout), "got echo: hello from c") ||
		strings.Contains(string(jout), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nhost:\n%s", err, jout, host.stdout.String())
	}
	for _, leak := range []string{"10.99.1.2", "192.168.1."} {
		if strings.Contains(string(jout), leak) {
			t.Fatalf("the C joiner learnt the host's address %s:\n%s", leak, jout)
		}
	}
	if hostOut := host.stdout.String(); strings.Contains(hostOut, "10.99.2.2") || strings.Contains(hostOut, "192.168.2.") {
		t.Fatalf("the host learnt the C joiner's address:\n%s", hostOut)
	}
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
