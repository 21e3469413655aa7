package redisstore_test

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// One real redis-server serves the tests of the package, started on a free
// loopback port by TestMain; each store gets its own deployment name, so
// tests never see each other's keys. Fault tests start their own server
// (dedicatedServer), since they stop, fill or demote it.
var (
	shared     *redisServer
	clientOnce sync.Once
	client     rueidis.Client
	nextName   atomic.Int64
	// redisBin is the redis-server binary; serverMissing says why the
	// Redis tests are skipped: only when the binary is not installed. CI
	// installs it (.ci/run) and sets RDV_REQUIRE_REDIS=1, so that a missing
	// binary fails there instead.
	redisBin      string
	serverMissing string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		serverMissing = "redis-server is not installed (apt-get install redis-server): " + err.Error()
		if os.Getenv("RDV_REQUIRE_REDIS") != "" {
			fmt.Fprintln(os.Stderr, "RDV_REQUIRE_REDIS is set but "+serverMissing)
			return 1
		}
		return m.Run()
	}
	redisBin = bin
	if shared, err = startServer(); err != nil {
		fmt.Fprintln(os.Stderr, "starting redis-server:", err)
		return 1
	}
	defer func() {
		if client != nil {
			client.Close()
		}
		shared.stop()
	}()
	return m.Run()
}

// redisServer is one redis-server process on a loopback port.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
}

// startServer runs redis-server on a free loopback port without
// persistence and waits (at most 10 s) until it answers PING.
func startServer() (*redisServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(redisBin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { // drain the log so the server never blocks on it
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	s := &redisServer{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	deadline := time.Now().Add(10 * time.Second)
	for !s.pong() {
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s", s.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, nil
}

func (s *redisServer) pong() bool {
	c, err := net.DialTimeout("tcp", s.addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

func (s *redisServer) stop() {
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
}

// redisClient returns the shared server's client, skipping the test
// (saying why) only when redis-server is not installed.
func redisClient(t testing.TB) rueidis.Client {
	t.Helper()
	if serverMissing != "" {
		t.Skip(serverMissing)
	}
	clientOnce.Do(func() { client = newClient(t, shared.addr) })
	return client
}

func newClient(t testing.TB, addr string) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("connecting to redis-server at %s: %v", addr, err)
	}
	return c
}

// dedicatedServer starts a server of the test's own, with a client, both
// stopped when the test ends.
func dedicatedServer(t *testing.T) (*redisServer, rueidis.Client) {
	t.Helper()
	if serverMissing != "" {
		t.Skip(serverMissing)
	}
	s, err := startServer()
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	c := newClient(t, s.addr)
	t.Cleanup(func() {
		c.Close()
		s.stop()
	})
	return s, c
}

// freshName is a deployment name no other store of this test run uses.
func freshName() string { return "t" + strconv.FormatInt(nextName.Add(1), 10) }

func netipAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
