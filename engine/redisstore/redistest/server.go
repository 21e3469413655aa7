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
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RequireEnv, when set, makes a missing redis-server a failure, not a skip.
const RequireEnv = "RDV_REQUIRE_REDIS"

// Server is one redis-server process without persistence on a loopback port.
type Server struct {
	Addr string // 127.0.0.1:port
	cmd  *exec.Cmd
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
func Start() (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
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
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd}
	deadline := time.Now().Add(10 * time.Second)
	for !s.pong() {
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s", s.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s, nil
}

func (s *Server) pong() bool {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprint(c, "PING\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// Pause stops the process (SIGSTOP): it keeps its connections but answers
// nothing until Resume.
func (s *Server) Pause() error { return s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused process.
func (s *Server) Resume() error { return s.cmd.Process.Signal(syscall.SIGCONT) }

// Stop kills the process and waits for it. Idempotent.
func (s *Server) Stop() {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return
	}
	_ = s.cmd.Wait()
}
