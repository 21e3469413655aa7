package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/httpapi/openapitest"
)

// hangGuard bounds every wait on the child process so a broken server fails
// the test instead of hanging it. It is not a speed assertion.
const hangGuard = 45 * time.Second

// binPath is the server binary TestMain builds once.
var binPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rendezvous-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot make a temporary directory:", err)
		os.Exit(1)
	}
	binPath = filepath.Join(dir, "rendezvous")
	build := exec.Command(goTool(), "build", "-o", binPath, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build the server binary:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	packageRedis.Stop()
	os.RemoveAll(dir)
	os.Exit(code)
}

// goTool is the go command of the toolchain running the test.
func goTool() string {
	if p := filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// lockedBuffer is an io.Writer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is one running server binary.
type proc struct {
	t              testing.TB
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	exited         chan struct{} // closed when the process has exited
	exitCode       int           // valid once exited is closed

	first    map[string]any // the first log line
	httpAddr string
	udpAddrs []string
	mediator string
	tokens   map[string]string // dev tokens by role
	client   *http.Client      // httpClient checked against the OpenAPI description, unless a benchmark wants keep-alive
}

// cleanEnv is the test's environment without any RDV_* setting, plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envPrefix) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runBinary runs the binary to completion (for startup failures).
func runBinary(t testing.TB, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = cleanEnv(env...)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the binary: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("wait: %v", err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errb.String()
	case <-time.After(hangGuard):
		_ = cmd.Process.Kill() // the test fails anyway
		t.Fatalf("the binary did not exit; stderr:\n%s", errb.String())
		return 0, "", ""
	}
}

// startProc starts the binary in --dev mode with JSON logs on free loopback
// ports, and waits for its first log line and its dev banner (none with
// --principals in args: the file's principals are used, no token printed).
func startProc(t testing.TB, args ...string) *proc {
	t.Helper()
	return startProcWrapped(t, nil, args...)
}

// startProcWrapped is startProc with the binary run by a wrapper command
// (e.g. prlimit), whose arguments come before the binary's path.
func startProcWrapped(t testing.TB, wrapper []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, exited: make(chan struct{}), tokens: map[string]string{}, client: openapitest.Client(t, httpClient)}
	base := []string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--dev", "--log-format", "json"}
	argv := append(append(append([]string(nil), wrapper...), binPath), append(base, args...)...)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = cleanEnv()
	outPipe, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("cannot start the binary: %v", err)
	}
	firstLine := make(chan string, 1)
	bannerDone := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(errPipe)
		for n := 0; sc.Scan(); n++ {
			p.stderr.Write(append(sc.Bytes(), '\n'))
			if n == 0 {
				firstLine <- sc.Text()
			}
		}
		close(firstLine) // harmless after a send: the reader took it or never will
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(outPipe)
		closed := false
		for sc.Scan() {
			p.stdout.Write(append(sc.Bytes(), '\n'))
			f := strings.Fields(sc.Text())
			if len(f) == 2 && (f[0] == "publisher" || f[0] == "client" || f[0] == "operator" || f[0] == httpapi.DevGlobalOperator) && !closed {
				p.tokens[f[0]] = f[1]
				if len(p.tokens) == 4 {
					closed = true
					close(bannerDone)
				}
			}
		}
		_, _ = io.Copy(io.Discard, outPipe) // drain: the scanner stopped
	}()
	go func() {
		readers.Wait() // Wait must not run before the pipes are read to EOF
		_ = p.cmd.Wait()
		p.exitCode = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill() // the test is over; a leftover process must not outlive it
			<-p.exited
		}
	})

	select {
	case line, ok := <-firstLine:
		if !ok {
			t.Fatalf("the server wrote no log line; stdout:\n%s", p.stdout.String())
		}
		if err := json.Unmarshal([]byte(line), &p.first); err != nil {
			t.Fatalf("first log line is not JSON: %q: %v", line, err)
		}
	case <-time.After(hangGuard):
		t.Fatalf("no log line from the server")
	}
	if p.first["msg"] != "listening" {
		t.Fatalf("first log line is %v, want msg=listening", p.first)
	}
	p.httpAddr, _ = p.first["http"].(string)
	udp, _ := p.first["udp"].(string)
	p.udpAddrs = strings.Split(udp, ",")
	p.mediator, _ = p.first["mediator"].(string)
	if p.httpAddr == "" || udp == "" || p.mediator == "" {
		t.Fatalf("first log line lacks an address: %v", p.first)
	}
	if strings.HasSuffix(p.httpAddr, ":0") || strings.HasSuffix(p.udpAddrs[0], ":0") {
		t.Fatalf("first log line names port 0, not the bound port: %v", p.first)
	}
	if slices.Contains(args, "--principals") {
		return p // no dev banner: the caller wrote the principals and knows their tokens
	}
	select {
	case <-bannerDone:
	case <-time.After(hangGuard):
		t.Fatalf("no dev banner with three tokens; stdout:\n%s", p.stdout.String())
	}
	return p
}

func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("cannot signal the server: %v", err)
	}
}

// wait waits for the process to exit and returns its status.
func (p *proc) wait() int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.exitCode
	case <-time.After(hangGuard):
		p.t.Fatalf("the server did not exit; log:\n%s", p.stderr.String())
		return -1
	}
}

// logLines parses every JSON log line written so far.
func (p *proc) logLines() []map[string]any {
	p.t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			p.t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// logged returns the first log line with msg, or nil.
func (p *proc) logged(msg string) map[string]any {
	for _, m := range p.logLines() {
		if m["msg"] == msg {
			return m
		}
	}
	return nil
}

// assertNoSecrets fails if the log shows any of secrets, or stdout any of
// capabilities (stdout shows only the dev tokens, by design).
func (p *proc) assertNoSecrets(secrets, capabilities []string) {
	p.t.Helper()
	logText, outText := p.stderr.String(), p.stdout.String()
	for _, s := range secrets {
		if s != "" && strings.Contains(logText, s) {
			p.t.Errorf("the log contains a secret (%d chars)", len(s))
		}
	}
	for _, s := range capabilities {
		if s != "" && strings.Contains(outText, s) {
			p.t.Errorf("stdout contains a capability (%d chars)", len(s))
		}
		if s != "" && strings.Contains(logText, s) {
			p.t.Errorf("the log contains a capability (%d chars)", len(s))
		}
	}
}
