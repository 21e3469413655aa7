package redisstore_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// One real redis-server serves every test of the package, started on a free
// loopback port by TestMain; each store gets its own deployment name, so
// tests never see each other's keys.
var (
	server struct {
		addr string
		cmd  *exec.Cmd
	}
	clientOnce sync.Once
	client     rueidis.Client
	nextName   atomic.Int64
	// serverMissing says why the Redis tests are skipped: only when the
	// binary is not installed. CI installs it (.ci/run), and sets
	// RDV_REQUIRE_REDIS=1 so that a missing binary fails instead.
	serverMissing string
)

func TestMain(m *testing.M) {
	code := run(m)
	os.Exit(code)
}

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
	stop, err := startServer(bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting redis-server:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// startServer runs redis-server on a free loopback port without
// persistence and waits until it answers PING.
func startServer(bin string) (stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--protected-mode", "no")
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
	server.addr, server.cmd = net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd
	stop = func() {
		if client != nil {
			client.Close()
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", server.addr, time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			fmt.Fprint(c, "PING\r\n")
			line, rerr := bufio.NewReader(c).ReadString('\n')
			c.Close()
			if rerr == nil && line == "+PONG\r\n" {
				return stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s", server.addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// redisClient returns the shared client, skipping the test (saying why)
// only when redis-server is not installed.
func redisClient(t testing.TB) rueidis.Client {
	t.Helper()
	if serverMissing != "" {
		t.Skip(serverMissing)
	}
	clientOnce.Do(func() {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{server.addr}, DisableCache: true})
		if err != nil {
			panic(fmt.Sprintf("connecting to redis-server at %s: %v", server.addr, err))
		}
		client = c
	})
	return client
}

// freshName is a deployment name no other store of this test run uses.
func freshName() string { return "t" + strconv.FormatInt(nextName.Add(1), 10) }
