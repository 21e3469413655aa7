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

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// TestCLibRelayOnlyJoinerGoHost: a relay-only join from C. The C example
// joiner (sdk/c/examples/rdv_peer.c, built under ASan and UBSan) allocates
// on a real coturn with the credential of its join answer, binds with its
// relayed address, gets the Go host's relayed address in RELAY-INTRODUCE,
// punches through the relay and has its datagram echoed by the Go host,
// which never learns its address.
func TestCLibRelayOnlyJoinerGoHost(t *testing.T) {
	dir := t.TempDir()
	bin := buildCPeerIn(t, dir)
	at, server := relayOnlyGoHost(t, dir)
	cmd := exec.Command(bin, "join", "--mediator", at.Mediator, "--handle", at.Handle.String(), "--token", at.Token.token(),
		"--relay", server, "--relay-user", at.Relay.Username, "--relay-credential", string(at.Relay.Credential), "--seconds", "30")
	runRelayJoiner(t, cmd, "got echo: hello from c")
}

// TestCSharpRelayOnlyJoinerGoHost is the same flow from the C# binding:
// sdk/csharp/examples/Join.cs compiled with mcs, run by mono over
// librendezvous.so.
func TestCSharpRelayOnlyJoinerGoHost(t *testing.T) {
	dir := t.TempDir()
	for _, tool := range []string{"cc", "mcs", "mono"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
		}
	}
	sdk := filepath.Join("..", "sdk")
	srcs, _ := filepath.Glob(filepath.Join(sdk, "c", "src", "*.c"))
	for _, c := range [][]string{
		append([]string{"cc", "-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-DRDV_SHARED_BUILD",
			"-I" + filepath.Join(sdk, "c", "include"), "-o", filepath.Join(dir, "librendezvous.so")}, srcs...),
		{"mcs", "-target:library", "-out:" + filepath.Join(dir, "Rendezvous.dll"), filepath.Join(sdk, "csharp", "Rendezvous.cs")},
		{"mcs", "-r:" + filepath.Join(dir, "Rendezvous.dll"), "-out:" + filepath.Join(dir, "Join.exe"), filepath.Join(sdk, "csharp", "examples", "Join.cs")},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c[0], err, out)
		}
	}
	at, server := relayOnlyGoHost(t, dir)
	cmd := exec.Command("mono", filepath.Join(dir, "Join.exe"), at.Mediator, at.Handle.String(), at.Token.token(), "30",
		server, at.Relay.Username, string(at.Relay.Credential))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	runRelayJoiner(t, cmd, "got echo: hello from c#")
}

// buildCPeerIn compiles the C example peer into dir under ASan and UBSan.
func buildCPeerIn(t *testing.T, dir string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("no C compiler: %v", err)
	}
	root := filepath.Join("..", "sdk", "c")
	srcs, _ := filepath.Glob(filepath.Join(root, "src", "*.c"))
	bin := filepath.Join(dir, "rdv_peer")
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-fsanitize=address,undefined",
		"-fno-sanitize-recover=all", "-I" + filepath.Join(root, "include"), "-I" + filepath.Join(root, "src"),
		"-o", bin, filepath.Join(root, "examples", "rdv_peer.c")}, srcs...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("building rdv_peer: %v\n%s", err, out)
	}
	return bin
}

// relayOnlyGoHost starts coturn, the server granting its credentials, and a
// Go host whose listing requires relay-only joins, which punches and echoes
// (its path must be relayed); it returns the client's join answer and the
// relay's "ip:port".
func relayOnlyGoHost(t *testing.T, dir string) (*Attempt, string) {
	t.Helper()
	const secret = "clib-relay-secret"
	turn := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), secret)
	secretFile := filepath.Join(dir, "turn-secret")
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, nil, "--turn-uri", "turn:"+turn.addr.String()+"?transport=udp", "--turn-secret-file", secretFile,
		"--relay-allow-peers", "127.0.0.0/8") // the test relay is on loopback

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
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
	t.Cleanup(func() { pub.Close(context.Background()) })
	go func() {
		in, err := pub.Accept(ctx)
		if err != nil {
			return
		}
		p, err := pub.Punch(ctx, in, PunchConfig{})
		if err != nil || !p.Relayed {
			if ctx.Err() == nil { // not the test's end cancelling it
				t.Errorf("Go host punch: %v (relayed %v)", err, p.Relayed)
			}
			return
		}
		e2e.Echo(ctx, pub.Socket())
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
	return at, strings.TrimSuffix(strings.TrimPrefix(at.Relay.URLs[0], "turn:"), "?transport=udp")
}

// runRelayJoiner runs a joiner program until it exits and checks that it
// connected through the relay (path 2) and printed want (the echo).
func runRelayJoiner(t *testing.T, cmd *exec.Cmd, want string) {
	t.Helper()
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
	if werr != nil || !strings.Contains(all, "path=2") || !strings.Contains(all, want) ||
		strings.Contains(stderr.String(), "Sanitizer") {
		t.Fatalf("joiner: %v\n%s\nstderr:\n%s", werr, all, stderr.String())
	}
}
