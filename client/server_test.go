package client

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/httpapi/openapitest"
)

// hangGuard bounds every wait on a child process so a broken server fails
// the test instead of hanging it. It is not a speed assertion.
const hangGuard = 30 * time.Second

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// buildBinaries builds the server and rendezvous-peer once per test run.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir, err := binaries()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return dir
}

// binaries builds the server and rendezvous-peer once and returns their
// directory.
func binaries() (string, error) {
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "rendezvous-client-test-")
		if buildErr != nil {
			return
		}
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		for _, pkg := range []string{"./cmd/rendezvous", "./cmd/rendezvous-peer"} {
			cmd := exec.Command(goTool(), "build", "-o", binDir+"/", pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("cannot build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	return binDir, buildErr
}

func goTool() string {
	if r := runtime.GOROOT(); r != "" {
		if p := filepath.Join(r, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

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
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// syncBuf is an io.Writer safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// testServer is one running server binary in --dev mode.
type testServer struct {
	http     string // base URL
	mediator netip.AddrPort
	tokens   map[string]string // publisher, client, operator (a global one)
	cmd      *exec.Cmd
	stdout   syncBuf
	stderr   syncBuf
	exited   chan struct{}
}

// tokenLine matches the --dev banner's token lines. The tests' operator
// drains and reads instance stats, so it is the global operator.
var tokenLine = regexp.MustCompile(`^\s+(publisher|client|global-operator)\s+(\S{8,})\s*$`)

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
	dir, err := binaries()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "rendezvous")
	args := append(append([]string{}, prefix...), bin, "--dev", "--log-format", "json")
	args = append(args, extra...)
	s := &testServer{tokens: map[string]string{}, exited: make(chan struct{})}
	s.cmd = exec.Command(args[0], args[1:]...)
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	s.cmd.Stdout, s.cmd.Stderr = outW, errW
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the server: %v", err)
	}
	go func() {
		s.cmd.Wait() // the exit status is read from ProcessState where needed
		outW.Close()
		errW.Close()
		close(s.exited)
	}()
	listening := make(chan map[string]any, 1)
	tokens := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(errR)
		sent := false
		for sc.Scan() {
			s.stderr.Write(append(sc.Bytes(), '\n'))
			var rec map[string]any
			if !sent && json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "listening" {
				listening <- rec
				sent = true
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		n := 0
		for sc.Scan() {
			s.stdout.Write(append(sc.Bytes(), '\n'))
			if m := tokenLine.FindStringSubmatch(sc.Text()); m != nil {
				s.tokens[strings.TrimPrefix(m[1], "global-")] = m[2]
				if n++; n == 3 {
					close(tokens)
				}
			}
		}
	}()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	select {
	case rec := <-listening:
		s.http = "http://" + fmt.Sprint(rec["http"])
		med, err := netip.ParseAddrPort(fmt.Sprint(rec["mediator"]))
		if err != nil {
			return s, fmt.Errorf("the listening line names no usable mediator: %v (%v)", rec, err)
		}
		s.mediator = med
	case <-s.exited:
		return s, fmt.Errorf("the server exited at start:\n%s", s.stderr.String())
	case <-timer.C:
		return s, fmt.Errorf("no listening line within %v:\n%s", hangGuard, s.stderr.String())
	}
	if slices.Contains(extra, "--principals") {
		return s, nil // the caller knows the file's tokens; none is printed
	}
	select {
	case <-tokens:
	case <-s.exited:
		return s, fmt.Errorf("the server exited before printing tokens:\n%s", s.stderr.String())
	case <-timer.C:
		return s, fmt.Errorf("no dev tokens within %v", hangGuard)
	}
	return s, nil
}

// checkedClient is the SDK's default HTTP client with a transport that
// fails t on any exchange the OpenAPI description does not promise.
func checkedClient(t *testing.T) *http.Client {
	t.Helper()
	return openapitest.Client(t, &http.Client{Timeout: 10 * time.Second})
}

// stop sends SIGTERM and waits for the exit (killing a wedged server).
func (s *testServer) stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM) // an error means it already exited
	select {
	case <-s.exited:
		return nil
	case <-time.After(hangGuard):
		s.cmd.Process.Kill() // a wedged server must not outlive the test
		<-s.exited
		return fmt.Errorf("the server did not stop on SIGTERM within %v", hangGuard)
	}
}

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

// stats reads the operator stats: used counts per pool.
func (s *testServer) stats(t *testing.T) map[string]int {
	t.Helper()
	var st struct {
		Draining bool `json:"draining"`
		Pools    map[string]struct {
			Used int `json:"used"`
		} `json:"pools"`
	}
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
