package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/httpapi/openapitest"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// hangGuard bounds every wait on the child process so a broken server fails
// the test instead of hanging it. It is not a speed assertion.
const hangGuard = 45 * time.Second

// build is the server binary, built once (TestMain removes it).
var build = e2e.NewBuild("./cmd/rendezvous")

// binPath is the server binary TestMain builds.
var binPath string

func TestMain(m *testing.M) {
	var err error
	if binPath, err = build.Path("rendezvous"); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build the server binary:", err)
		build.Remove()
		os.Exit(1)
	}
	code := m.Run()
	packageRedis.Stop()
	build.Remove()
	os.Exit(code)
}

// proc is one running server binary.
type proc struct {
	t              testing.TB
	srv            *e2e.Server
	cmd            *exec.Cmd
	stdout, stderr *e2e.LockedBuffer
	exited         chan struct{} // closed when the process has exited

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
	s, err := e2e.Start(append([]string{binPath}, args...), cleanEnv(env...))
	if err != nil {
		t.Fatal(err)
	}
	code, err = s.Wait(hangGuard)
	if err != nil {
		s.Kill() // the test fails anyway
		t.Fatal(err)
	}
	return code, s.Stdout.String(), s.Stderr.String()
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
	p := &proc{t: t, tokens: map[string]string{}, client: openapitest.Client(t, httpClient)}
	base := []string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--dev", "--log-format", "json"}
	argv := append(append(append([]string(nil), wrapper...), binPath), append(base, args...)...)
	srv, err := e2e.Start(argv, cleanEnv())
	if err != nil {
		t.Fatal(err)
	}
	p.srv, p.cmd, p.stdout, p.stderr, p.exited = srv, srv.Cmd, &srv.Stdout, &srv.Stderr, srv.Exited
	t.Cleanup(srv.Kill) // the test is over; a leftover process must not outlive it

	line, err := srv.FirstLine(hangGuard)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(line), &p.first); err != nil {
		t.Fatalf("first log line is not JSON: %q: %v", line, err)
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
	if err := srv.Banner(hangGuard); err != nil {
		t.Fatal(err)
	}
	p.tokens = srv.Tokens
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
	code, err := p.srv.Wait(hangGuard)
	if err != nil {
		p.t.Fatal(err)
	}
	return code
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
