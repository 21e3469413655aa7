package client

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
	at, server := relayOnlyGoHost(t)
	cmd := exec.Command(bin, "join", "--mediator", at.Mediator, "--handle", at.Handle.String(), "--token", at.Token.token(),
		"--relay", server, "--relay-user", at.Relay.Username, "--relay-credential", string(at.Relay.Credential), "--seconds", "30")
	runRelayJoiner(t, cmd, "got echo: hello from c")
}

// TestCSharpRelayOnlyJoinerGoHost is the same flow from the C# binding:
// sdk/csharp/examples/Join.cs compiled with mcs, run by mono over
// librendezvous.so.
func TestCSharpRelayOnlyJoinerGoHost(t *testing.T) {
	dir := t.TempDir()
	exe := buildCSharpExample(t, dir, "Join.cs")
	at, server := relayOnlyGoHost(t)
	cmd := exec.Command("mono", exe, at.Mediator, at.Handle.String(), at.Token.token(), "30",
		server, at.Relay.Username, string(at.Relay.Credential))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir)
	runRelayJoiner(t, cmd, "got echo: hello from c#")
}

// TestCSharpRelayOnlyHostGoJoiner is the relay with the C# binding on the
// host's side: sdk/csharp/examples/Host.cs (mcs, mono) keeps its listing's
// presence, learns from its bind's answer that the Go joiner's attempt is
// relay-only, fetches the host's relay credential over REST (its own HTTP
// client, the publisher's token from RDV_TOKEN), allocates on coturn and
// echoes the Go joiner's datagram through the relay.
func TestCSharpRelayOnlyHostGoJoiner(t *testing.T) {
	dir := t.TempDir()
	exe := buildCSharpExample(t, dir, "Host.cs")
	ctx, s, hostAPI, clientAPI := relayServerAPIs(t)
	created, err := hostAPI.CreateListing(ctx, NewIdempotencyKey(), ListingSpec{Region: "eu-central", ProtocolVersion: 7,
		BuildVersion: "1.2.3", DisplayName: "C# relay host", Visibility: "public", TrustMode: "player_hosted",
		CurrentPlayers: 1, MaxPlayers: 4})
	if err != nil {
		t.Fatal(err)
	}
	p := created.Presence
	host := exec.Command("mono", exe, p.Mediator, p.Handle.String(), p.Token.token(),
		strconv.Itoa(int(p.Interval/time.Second)), "40", s.http, created.ListingID.String())
	host.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, "RDV_TOKEN="+s.tokens["publisher"])
	var out e2e.LockedBuffer // written by exec while the test reads
	host.Stdout, host.Stderr = &out, &out
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		host.Process.Kill()
		host.Wait()
		if t.Failed() {
			t.Logf("C# host output:\n%s", out.String())
		}
	})
	requireLines(t, "the C# host", out.String, `presence .*`) // the listing is joinable once its presence is fresh

	j, err := NewJoiner(JoinerConfig{API: clientAPI, ProtocolVersion: 7, ListenAddr: "127.0.0.1:0", RelayOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	_, path, err := j.JoinAndPunch(ctx, created.ListingID, PunchConfig{})
	if err != nil || !path.Relayed {
		t.Fatalf("Go joiner: %v (relayed %v)", err, path.Relayed)
	}
	if got, _, err := e2e.Ping(ctx, j.Socket(), path.Peer, "ping from go"); err != nil || got != "echo: ping from go" {
		t.Fatalf("got %q (%v), want the C# host's echo through the relay", got, err)
	}
	requireLines(t, "the C# host", out.String, `relay-only \S+`, `relay \S+ via 127\.0\.0\.1:\d+`, `connected \S+ 127\.0\.0\.1:\d+ path=2`)
}

// buildCSharpExample builds librendezvous.so, the binding and one of
// sdk/csharp/examples into dir and returns the example's .exe; mono runs
// it with LD_LIBRARY_PATH=dir.
func buildCSharpExample(t *testing.T, dir, example string) string {
	t.Helper()
	for _, tool := range []string{"cc", "mcs", "mono"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
		}
	}
	sdk := filepath.Join("..", "sdk")
	srcs, _ := filepath.Glob(filepath.Join(sdk, "c", "src", "*.c"))
	exe := filepath.Join(dir, strings.TrimSuffix(example, ".cs")+".exe")
	for _, c := range [][]string{
		append([]string{"cc", "-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-DRDV_SHARED_BUILD",
			"-I" + filepath.Join(sdk, "c", "include"), "-o", filepath.Join(dir, "librendezvous.so")}, srcs...),
		{"mcs", "-target:library", "-out:" + filepath.Join(dir, "Rendezvous.dll"), filepath.Join(sdk, "csharp", "Rendezvous.cs")},
		{"mcs", "-r:" + filepath.Join(dir, "Rendezvous.dll"), "-out:" + exe, filepath.Join(sdk, "csharp", "examples", example)},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c[0], err, out)
		}
	}
	return exe
}

// requireLines waits (hangGuard at most: a peer may still be printing)
// until printed has a line matching each of lines (regular expressions of
// a whole line), in that order.
func requireLines(t *testing.T, who string, printed func() string, lines ...string) {
	t.Helper()
	missing := func(out string) string {
		for _, l := range lines {
			loc := regexp.MustCompile(`(?m)^` + l + `$`).FindStringIndex(out)
			if loc == nil {
				return l
			}
			out = out[loc[1]:]
		}
		return ""
	}
	for deadline := time.Now().Add(hangGuard); missing(printed()) != ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s printed no line %q (after the ones before it):\n%s", who, missing(printed()), printed())
		}
	}
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

// relayServerAPIs starts coturn and the server granting its credentials
// and returns a context bounded by hangGuard, the server, and the
// publisher's and the client's APIs on it.
func relayServerAPIs(t *testing.T) (context.Context, *testServer, *API, *API) {
	t.Helper()
	s, _ := startRelayServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	var apis [2]*API
	for i, who := range []string{"publisher", "client"} {
		a, err := NewAPI(s.http, s.tokens[who], nil)
		if err != nil {
			t.Fatal(err)
		}
		apis[i] = a
	}
	return ctx, s, apis[0], apis[1]
}

// relayOnlyGoHost starts coturn, the server granting its credentials, and a
// Go host whose listing requires relay-only joins, which punches and echoes
// (its path must be relayed); it returns the client's join answer and the
// relay's "ip:port".
func relayOnlyGoHost(t *testing.T) (*Attempt, string) {
	t.Helper()
	ctx, _, hostAPI, clientAPI := relayServerAPIs(t)
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
