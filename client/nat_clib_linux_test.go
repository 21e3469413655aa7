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
)

// TestNATCLibHostGoJoiner is TestNATHolePunch's endpoint-independent case
// with the C library on the host's side: sdk/c's example host (rdv_peer)
// in the host namespace behind nat1, the Go rendezvous-peer joiner behind
// nat2, speaking rendezvous-peer's chat (rdv_peer --chat). They must punch
// through both NATs and exchange datagrams directly,
// with none of that traffic reaching the server.
func TestNATCLibHostGoJoiner(t *testing.T) {
	requireNetns(t)
	l := newLab(t, 'C', false, false)
	srv := startServer(t, []string{"ip", "netns", "exec", l.ns("pub")},
		"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478")
	dir := t.TempDir()
	bin := buildCPeerIn(t, dir)

	// The game's own HTTP client: curl in the host namespace. The token is
	// in a header file, never on a command line.
	hdr := filepath.Join(dir, "auth")
	if err := os.WriteFile(hdr, []byte("Authorization: Bearer "+srv.tokens["publisher"]+"\nIdempotency-Key: nat-clib-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body := `{"region":"eu-central","protocol_version":7,"build_version":"1.2.3","display_name":"C host behind NAT",` +
		`"visibility":"public","trust_mode":"player_hosted","current_players":1,"max_players":4}`
	out, err := exec.Command("ip", "netns", "exec", l.ns("host"), "curl", "-sf", "-X", "POST", "-H", "@"+hdr,
		"-H", "Content-Type: application/json", "--data", body, "http://10.99.0.1:8080/v1/listings").Output()
	if err != nil {
		t.Fatalf("create listing: %v", err)
	}
	var pub struct {
		ListingID string `json:"listing_id"`
		Presence  struct {
			Handle   string `json:"handle"`
			Token    string `json:"token"`
			Mediator string `json:"mediator"`
			Interval int    `json:"interval_s"`
		} `json:"presence"`
	}
	if err := json.Unmarshal(out, &pub); err != nil || pub.Presence.Mediator == "" {
		t.Fatalf("create listing answer: %v", err)
	}
	host := exec.Command("ip", "netns", "exec", l.ns("host"), bin, "host", "--listen", "0.0.0.0:0",
		"--mediator", pub.Presence.Mediator, "--handle", pub.Presence.Handle, "--token", pub.Presence.Token,
		"--interval", "5", "--seconds", "30", "--chat")
	var hostOut, hostErr syncBuf // written by exec while the test reads
	host.Stdout, host.Stderr = &hostOut, &hostErr
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
	join := startPeer(t, l.exec("join"), srv.tokens["client"], "join", "--server", "http://10.99.0.1:8080",
		"--listing", pub.ListingID, "--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "3s")
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
	if l.counter("direct_1to2") == 0 || l.counter("direct_2to1") == 0 {
		t.Fatalf("no direct traffic between the NATs (1→2 %d, 2→1 %d)", l.counter("direct_1to2"), l.counter("direct_2to1"))
	}
	if n := l.counter("to_server_nonstun"); n != 0 {
		t.Fatalf("the server received %d non-STUN datagrams: peer traffic went through it", n)
	}
}
