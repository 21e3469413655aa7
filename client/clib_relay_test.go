package client

import (
	"bufio"
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCLibRelayOnlyJoinerGoHost: a relay-only join from C. The C example
// joiner (sdk/c/examples/rdv_peer.c, built under ASan and UBSan) allocates
// on a real coturn with the credential of its join answer, binds with its
// relayed address, gets the Go host's relayed address in RELAY-INTRODUCE,
// punches through the relay and has its datagram echoed by the Go host,
// which never learns its address.
func TestCLibRelayOnlyJoinerGoHost(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler: %v", err)
	}
	root := filepath.Join("..", "sdk", "c")
	srcs, _ := filepath.Glob(filepath.Join(root, "src", "*.c"))
	dir := t.TempDir()
	bin := filepath.Join(dir, "rdv_peer")
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-fsanitize=address,undefined",
		"-fno-sanitize-recover=all", "-I" + filepath.Join(root, "include"), "-I" + filepath.Join(root, "src"),
		"-o", bin, filepath.Join(root, "examples", "rdv_peer.c")}, srcs...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building rdv_peer: %v\n%s", err, out)
	}
	const secret = "clib-relay-secret"
	turn := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), secret)
	secretFile := filepath.Join(dir, "turn-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, nil, "--turn-uri", "turn:"+turn.addr.String()+"?transport=udp", "--turn-secret-file", secretFile)

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	hostAPI, err := NewAPI(s.http, s.tokens["publisher"], nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := Publish(ctx, PublisherConfig{API: hostAPI, ListenAddr: "127.0.0.1:0", Spec: ListingSpec{
		Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "relay-only host",
		Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: 4, RelayOnlyJoins: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	hostPath := make(chan Path, 1)
	go func() {
		in, err := pub.Accept(ctx)
		if err != nil {
			return
		}
		p, err := pub.Punch(ctx, in, PunchConfig{})
		if err != nil {
			t.Errorf("Go host punch: %v", err)
			return
		}
		hostPath <- p
		buf := make([]byte, 1500)
		for {
			n, from, err := pub.Socket().ReadFrom(ctx, buf)
			if err != nil {
				return
			}
			_, _ = pub.Socket().WriteTo(append([]byte("echo: "), buf[:n]...), from)
		}
	}()

	clientAPI, err := NewAPI(s.http, s.tokens["client"], nil)
	if err != nil {
		t.Fatal(err)
	}
	at, err := clientAPI.CreateJoinAttemptWith(ctx, NewIdempotencyKey(), pub.ListingID(), AttemptRequest{ProtocolVersion: 7})
	if err != nil {
		t.Fatal(err)
	}
	if !at.RelayOnly || at.Relay == nil || len(at.Relay.URLs) != 1 {
		t.Fatalf("join answer: relay-only %v, relay %v", at.RelayOnly, at.Relay != nil)
	}
	server := strings.TrimSuffix(strings.TrimPrefix(at.Relay.URLs[0], "turn:"), "?transport=udp")
	cmd := exec.Command(bin, "join", "--mediator", at.Mediator, "--handle", at.Handle.String(), "--token", at.Token.token(),
		"--relay", server, "--relay-user", at.Relay.Username, "--relay-credential", string(at.Relay.Credential), "--seconds", "30")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	werr := cmd.Wait()
	all := strings.Join(lines, "\n")
	if werr != nil || !strings.Contains(all, "path=2") || !strings.Contains(all, "got echo: hello from c") ||
		strings.Contains(stderr.String(), "Sanitizer") {
		t.Fatalf("C joiner: %v\n%s\nstderr:\n%s", werr, all, stderr.String())
	}
	select {
	case p := <-hostPath:
		if !p.Relayed {
			t.Fatalf("the Go host's path is not relayed: %+v", p)
		}
	case <-time.After(hangGuard):
		t.Fatal("the Go host never connected")
	}
}
