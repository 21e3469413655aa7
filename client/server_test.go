package client

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/httpapi/openapitest"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// hangGuard bounds every wait on a child process so a broken server fails
// the test instead of hanging it. It is not a speed assertion.
const hangGuard = 30 * time.Second

// build is the server and rendezvous-peer, built once per test run.
var build = e2e.NewBuild("./cmd/rendezvous", "./cmd/rendezvous-peer")

// buildBinaries builds the server and rendezvous-peer once per test run
// and returns their directory.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir, err := build.Dir()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return dir
}

func TestMain(m *testing.M) {
	flag.Parse()
	stopExamples, err := serveExamples()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stopExamples()
	packageRedis.Stop()
	build.Remove()
	os.Exit(code)
}

// testServer is one running server binary in --dev mode.
type testServer struct {
	http     string // base URL
	mediator netip.AddrPort
	tokens   map[string]string // publisher, client, operator (a global one)
	srv      *e2e.Server
	cmd      *exec.Cmd
	stdout   *e2e.LockedBuffer
	stderr   *e2e.LockedBuffer
	exited   chan struct{}
}

// startLoopback runs the server (startServer) on loopback ports with the
// store's flags and extra ones, and returns it with a context that bounds
// the test's waits (hangGuard), cancelled at cleanup.
func startLoopback(t *testing.T, storeArgs []string, extra ...string) (*testServer, context.Context) {
	t.Helper()
	srv := startServer(t, nil, slices.Concat(storeArgs, []string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, extra)...)
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return srv, ctx
}

// startServer runs the server with prefix (e.g. ip netns exec NS) before the
// binary, --dev, JSON logs and extra flags; it waits for the "listening" log
// line and the dev tokens (none with --principals in extra: the file's
// principals are used). The process is stopped at cleanup.
func startServer(t *testing.T, prefix []string, extra ...string) *testServer {
	t.Helper()
	s, err := launchServer(prefix, extra...)
	if s != nil {
		t.Cleanup(func() {
			if err := s.stop(); err != nil {
				t.Error(err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// launchServer is startServer without a test: on error, a started process
// is returned too, for the caller to stop.
func launchServer(prefix []string, extra ...string) (*testServer, error) {
	bin, err := build.Path("rendezvous")
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, prefix...), bin, "--dev", "--log-format", "json")
	args = append(args, extra...)
	srv, err := e2e.Start(args, nil)
	if err != nil {
		return nil, err
	}
	s := &testServer{tokens: map[string]string{}, srv: srv, cmd: srv.Cmd, stdout: &srv.Stdout, stderr: &srv.Stderr, exited: srv.Exited}
	rec, err := srv.Listening(hangGuard)
	if err != nil {
		return s, err
	}
	s.http = "http://" + fmt.Sprint(rec["http"])
	med, err := netip.ParseAddrPort(fmt.Sprint(rec["mediator"]))
	if err != nil {
		return s, fmt.Errorf("the listening line names no usable mediator: %v (%v)", rec, err)
	}
	s.mediator = med
	if slices.Contains(extra, "--principals") {
		return s, nil // the caller knows the file's tokens; none is printed
	}
	if err := srv.Banner(hangGuard); err != nil {
		return s, err
	}
	// The tests' operator drains and reads instance stats, so it is the
	// global operator.
	for _, role := range []string{"publisher", "client"} {
		s.tokens[role] = srv.Tokens[role]
	}
	s.tokens["operator"] = srv.Tokens["global-operator"]
	return s, nil
}

// checkedClient is the SDK's default HTTP client with a transport that
// fails t on any exchange the OpenAPI description does not promise.
func checkedClient(t *testing.T) *http.Client {
	t.Helper()
	return openapitest.Client(t, &http.Client{Timeout: 10 * time.Second})
}

// stop sends SIGTERM and waits for the exit (killing a wedged server).
func (s *testServer) stop() error { return s.srv.Stop(hangGuard) }

// api returns an API for one of the dev principals whose every exchange is
// checked against the OpenAPI description.
func (s *testServer) api(t *testing.T, role string) *API {
	t.Helper()
	a, err := NewAPI(s.http, s.tokens[role], checkedClient(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// stats reads the operator stats: used counts per pool, read from the
// store after stats began (the server keeps its figures a second, so once
// that has passed the read refreshes them).
func (s *testServer) stats(t *testing.T) map[string]int {
	t.Helper()
	var st struct {
		Draining bool `json:"draining"`
		Pools    map[string]struct {
			Used int `json:"used"`
		} `json:"pools"`
	}
	time.Sleep(1150 * time.Millisecond)
	c := &call{op: "stats", method: "GET", path: "/v1/admin/stats", out: &st}
	if err := s.api(t, "operator").do(context.Background(), c); err != nil {
		t.Fatalf("stats: %v", err)
	}
	out := map[string]int{}
	for k, v := range st.Pools {
		out[k] = v.Used
	}
	return out
}
