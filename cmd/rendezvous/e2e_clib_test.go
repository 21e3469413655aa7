package main

import (
	"bufio"
	"context"
	"io"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// The C library (sdk/c) against the real server binary: its example
// program rdv_peer, built here under AddressSanitizer and
// UndefinedBehaviorSanitizer, is a host or a joiner on loopback; the other
// side is the Go SDK or rdv_peer again. The test driver makes the REST
// calls and passes the answers' fields, as a game's own HTTP client would.

var (
	cPeerOnce sync.Once
	cPeerBin  string
	cPeerErr  string
)

// buildCPeer compiles sdk/c/examples/rdv_peer.c with the library's sources,
// once per test binary (TestMain's directory is removed at exit).
func buildCPeer(t *testing.T) string {
	t.Helper()
	cPeerOnce.Do(func() { cPeerBin, cPeerErr = compileCPeer(filepath.Dir(binPath)) })
	if cPeerErr != "" {
		t.Fatal(cPeerErr)
	}
	return cPeerBin
}

func compileCPeer(dir string) (string, string) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", "no C compiler (cc): " + err.Error()
	}
	root := filepath.Join("..", "..", "sdk", "c")
	srcs, err := filepath.Glob(filepath.Join(root, "src", "*.c"))
	if err != nil || len(srcs) == 0 {
		return "", "no C sources under " + root
	}
	bin := filepath.Join(dir, "rdv_peer")
	args := append([]string{"-std=c99", "-Wall", "-Wextra", "-Werror", "-g", "-fsanitize=address,undefined",
		"-fno-sanitize-recover=all", "-I" + filepath.Join(root, "include"), "-I" + filepath.Join(root, "src"),
		"-o", bin, filepath.Join(root, "examples", "rdv_peer.c")}, srcs...)
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		return "", "building rdv_peer: " + err.Error() + "\n" + string(out)
	}
	return bin, ""
}

// cPeer is a running rdv_peer whose output lines arrive on lines.
type cPeer struct {
	cmd   *exec.Cmd
	lines chan string
	mu    sync.Mutex
	all   []string
	done  chan struct{}
	err   error
}

func startCPeer(t *testing.T, bin string, args ...string) *cPeer {
	t.Helper()
	return startPeerCmd(t, exec.Command(bin, args...), args[0])
}

// startPeerCmd starts cmd (a C or C# peer) and collects its output lines.
func startPeerCmd(t *testing.T, cmd *exec.Cmd, name string) *cPeer {
	t.Helper()
	c := &cPeer{cmd: cmd, lines: make(chan string, 64), done: make(chan struct{})}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	c.cmd.Stderr = &stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("starting rdv_peer: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.all = append(c.all, sc.Text())
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if strings.Contains(stderr.String(), "Sanitizer") || strings.Contains(stderr.String(), "runtime error") {
			t.Errorf("%s: sanitizer report:\n%s", name, stderr.String())
		}
		if t.Failed() {
			t.Logf("%s output:\n%s\nstderr:\n%s", name, strings.Join(c.output(), "\n"), stderr.String())
		}
	})
	return c
}

func (c *cPeer) output() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.all...)
}

// expect waits for a line starting with prefix and returns it.
func (c *cPeer) expect(t *testing.T, prefix string) string {
	t.Helper()
	end := time.After(hangGuard)
	for {
		select {
		case l := <-c.lines:
			if strings.HasPrefix(l, prefix) {
				return l
			}
		case <-c.done:
			for _, l := range c.output() { // the line may have raced the exit
				if strings.HasPrefix(l, prefix) {
					return l
				}
			}
			t.Fatalf("rdv_peer exited (%v) before printing %q", c.err, prefix)
		case <-end:
			t.Fatalf("rdv_peer printed no %q", prefix)
		}
	}
}

func cHostArgs(pub published) []string {
	return []string{"host", "--mediator", pub.Presence.Mediator, "--handle", pub.Presence.Handle,
		"--token", pub.Presence.Token, "--interval", strconv.Itoa(pub.Presence.Interval), "--seconds", "40"}
}

// startCHost starts the server and a C host holding the presence of a
// listing published under key and name, once it reported that presence.
func startCHost(t *testing.T, key, name string) (string, *proc, published, *cPeer) {
	t.Helper()
	bin := buildCPeer(t)
	p := startProc(t)
	pub := p.publish(key, name)
	host := startCPeer(t, bin, cHostArgs(pub)...)
	host.expect(t, "presence ")
	return bin, p, pub, host
}

// goJoinAndPunch joins listing as the client principal with a Go joiner
// and punches to its host; the caller closes the joiner.
func goJoinAndPunch(ctx context.Context, t *testing.T, p *proc, listing string) (*client.Joiner, client.Path) {
	t.Helper()
	api, err := client.NewAPI("http://"+p.httpAddr, p.tokens["client"], nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := client.NewJoiner(client.JoinerConfig{API: api, ProtocolVersion: 7, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := client.ParseListingID(listing)
	if err != nil {
		j.Close()
		t.Fatal(err)
	}
	_, path, err := j.JoinAndPunch(ctx, id, client.PunchConfig{})
	if err != nil {
		j.Close()
		t.Fatalf("Go joiner: %v", err)
	}
	return j, path
}

// pingUntilAnswered sends "ping from go" to peer every 250ms until a
// datagram comes back and returns it with its sender; peer names the
// other side for the failure when ctx ends first.
func pingUntilAnswered(ctx context.Context, t *testing.T, s *client.Socket, peer netip.AddrPort, who string) (string, netip.AddrPort) {
	t.Helper()
	got, from, err := e2e.Ping(ctx, s, peer, "ping from go")
	if err != nil {
		t.Fatalf("%s never echoed: %v", who, err)
	}
	return got, from
}

// TestCLibHostGoJoiner: a C host keeps its presence, is offered the Go
// joiner's attempt, binds, is introduced, and the two punch on loopback;
// the Go joiner's datagram comes back through the C host's echo.
func TestCLibHostGoJoiner(t *testing.T) {
	_, p, pub, host := startCHost(t, "clib-host-1", "C host")

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	j, path := goJoinAndPunch(ctx, t, p, pub.ListingID)
	defer j.Close()
	if path.Relayed {
		t.Fatalf("loopback punch went through a relay")
	}
	host.expect(t, "attempt ")
	host.expect(t, "introduced ")
	if l := host.expect(t, "connected "); !strings.Contains(l, "path=1") {
		t.Fatalf("C host: %q, want a direct path", l)
	}
	host.expect(t, "reported ") // the mediator's signed answer to the C host's outcome report
	if got, from := pingUntilAnswered(ctx, t, j.Socket(), path.Peer, "the C host"); got != "echo: ping from go" || from != path.Peer {
		t.Fatalf("got %q from %v, want the C host's echo from %v", got, from, path.Peer)
	}
}

// TestCLibJoinerGoHost: a Go host publishes and accepts; the C joiner binds
// with the attempt the test created over REST, is introduced, punches and
// gets its datagram echoed by the Go host.
func TestCLibJoinerGoHost(t *testing.T) {
	bin := buildCPeer(t)
	p := startProc(t)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	hostAPI, err := client.NewAPI("http://"+p.httpAddr, p.tokens["publisher"], nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := client.Publish(ctx, client.PublisherConfig{API: hostAPI, ListenAddr: "127.0.0.1:0",
		Spec: client.ListingSpec{Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3",
			DisplayName: "Go host", Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: 4}})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	go func() {
		in, err := pub.Accept(ctx)
		if err != nil {
			return
		}
		if _, err := pub.Punch(ctx, in, client.PunchConfig{}); err != nil {
			t.Errorf("Go host punch: %v", err)
			return
		}
		e2e.Echo(ctx, pub.Socket())
	}()
	jn := p.join("clib-join-1", pub.ListingID().String())
	c := startCPeer(t, bin, "join", "--mediator", jn.Mediator, "--handle", jn.Handle, "--token", jn.Token, "--seconds", "40")
	c.expect(t, "introduced ")
	if l := c.expect(t, "connected "); !strings.Contains(l, "path=1") {
		t.Fatalf("C joiner: %q, want a direct path", l)
	}
	if l := c.expect(t, "got "); l != "got echo: hello from c" {
		t.Fatalf("C joiner: %q", l)
	}
	<-c.done
	if c.err != nil {
		t.Fatalf("C joiner exited with %v", c.err)
	}
}

// TestCLibHostCJoiner: both sides are the C library.
func TestCLibHostCJoiner(t *testing.T) {
	bin, p, pub, host := startCHost(t, "clib-both-1", "C host for C")
	jn := p.join("clib-both-join-1", pub.ListingID)
	c := startCPeer(t, bin, "join", "--mediator", jn.Mediator, "--handle", jn.Handle, "--token", jn.Token, "--seconds", "40")
	if l := c.expect(t, "got "); l != "got echo: hello from c" {
		t.Fatalf("C joiner: %q", l)
	}
	host.expect(t, "connected ")
}
