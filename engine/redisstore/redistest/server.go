// Package redistest starts real redis-server processes on free loopback
// ports for tests (the Redis store's and the server's end-to-end tests).
// A test skips, saying why, only when redis-server is not installed; with
// RDV_REQUIRE_REDIS set (CI installs the binary and sets it) it fails
// instead.
package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RequireEnv, when set, makes a missing redis-server a failure, not a skip.
const RequireEnv = "RDV_REQUIRE_REDIS"

// Server is one redis-server process on a loopback port, without
// persistence unless started by StartPersistent.
type Server struct {
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
	bin  string   // redis-server, or redis-sentinel (StartSentinel)
	args []string // the binary's arguments, for Restart
	// tmp is the directory of a server started without one of its own:
	// a replica writes the snapshot it syncs from there, and a server
	// started in the test's working directory would load one left there.
	tmp string
	// callgrind is the directory of its counts when it runs under
	// valgrind's callgrind (CallgrindEnv), else "".
	callgrind string
}

// Missing says why Redis tests cannot run (redis-server not installed), or
// "" when they can.
func Missing() string {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "redis-server is not installed (apt-get install redis-server): " + err.Error()
	}
	return ""
}

// SkipIfMissing skips t when redis-server is not installed, or fails it
// when RequireEnv is set.
func SkipIfMissing(t testing.TB) {
	t.Helper()
	if why := Missing(); why != "" {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but %s", RequireEnv, why)
		}
		t.Skip(why)
	}
}

// Require starts a server for t, stopped when t ends.
func Require(t testing.TB) *Server {
	t.Helper()
	SkipIfMissing(t)
	s, err := Start()
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Start runs redis-server on a free loopback port and waits (at most 10 s)
// until it answers PING.
func Start() (*Server, error) { return StartWith() }

// StartWith is Start with more redis-server arguments (e.g. --requirepass).
func StartWith(extra ...string) (*Server, error) {
	return start(append([]string{"--save", "", "--appendonly", "no"}, extra...)...)
}

// StartPersistent runs redis-server as an operator does: every write is in
// the append-only file in dir, synced before it is acknowledged, so a
// server killed and restarted (Restart) on the same port and dir has every
// acknowledged write.
func StartPersistent(dir string) (*Server, error) {
	return start("--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir)
}

func start(args ...string) (*Server, error) { return startOn("127.0.0.1", args...) }

// startOn runs redis-server listening on host, a loopback address.
func startOn(host string, args ...string) (*Server, error) {
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	base := []string{"--port", strconv.Itoa(port), "--bind", host}
	if host != "127.0.0.1" {
		for _, kv := range ownAddrSettings(host) {
			k, v, _ := strings.Cut(kv, " ")
			base = append(base, "--"+k, v)
		}
	}
	s := &Server{Addr: net.JoinHostPort(host, strconv.Itoa(port)), bin: "redis-server", args: append(base, args...)}
	if !slices.Contains(args, "--dir") {
		if s.tmp, err = os.MkdirTemp("", "redistest-"); err != nil {
			return nil, err
		}
		s.args = append(s.args, "--dir", s.tmp)
	}
	return s, s.run()
}

// freePort returns a port free on host at the time of the call.
func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// run starts the process and waits (at most 10 s) until it answers PING.
func (s *Server) run() error {
	bin, err := exec.LookPath(s.bin)
	if err != nil {
		return err
	}
	if s.tmp != "" {
		if err := os.MkdirAll(s.tmp, 0o700); err != nil {
			return err
		}
	}
	args := s.args
	s.callgrind = ""
	if dir := os.Getenv(CallgrindEnv); dir != "" && s.bin == "redis-server" {
		s.callgrind = dir
		bin, args = "valgrind", append(callgrindArgs(dir, bin), args...)
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { // drain the log so the server never blocks on it
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for !s.pong() {
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("%s on %s did not answer PING within 10s", s.bin, s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// Restart starts the server again on the same port with the same settings
// (and so the same data directory) after Stop.
func (s *Server) Restart() error { return s.run() }

func (s *Server) pong() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	// A server with --requirepass answers an unauthenticated PING with
	// NOAUTH: it is up.
	return err == nil && (line == "+PONG\r\n" || strings.HasPrefix(line, "-NOAUTH"))
}

// Pause stops the process (SIGSTOP): it keeps its connections but answers
// nothing until Resume.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process.
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the process (SIGKILL: no shutdown, no final save) and waits
// for it. Idempotent.
func (s *Server) Stop() {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return
	}
	_ = s.cmd.Wait()
	if s.tmp != "" {
		_ = os.RemoveAll(s.tmp) // Restart makes it again
	}
}

// CommandStat reads one command's calls and microseconds from the text of
// INFO commandstats (zero when the command has not run since the last
// CONFIG RESETSTAT).
func CommandStat(info, command string) (calls, usec float64) {
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_"+command+":")
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "calls":
				calls = n
			case "usec":
				usec = n
			}
		}
	}
	return calls, usec
}
