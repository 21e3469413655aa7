package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BannerRoles are the roles whose tokens the server's --dev banner prints
// on stdout, one "role token" line each (httpapi.DevGlobalOperator is the
// last; it is not imported so that httpapi's own tests may use this
// package).
var BannerRoles = []string{"publisher", "client", "operator", "global-operator"}

// Server is one running server binary with its output captured: every
// line of stderr (the log) and stdout (the dev banner) is kept, and the
// first log line, the first "listening" line and the banner's tokens are
// watched for as they come.
type Server struct {
	Cmd            *exec.Cmd
	Stdout, Stderr LockedBuffer
	// Tokens holds the dev banner's tokens by role as printed; complete
	// once Banner returned nil, and not written after that.
	Tokens map[string]string
	// Exited is closed once the process has exited (its pipes read to
	// the end).
	Exited chan struct{}

	exitCode  int
	first     chan string
	listening chan map[string]any
	banner    chan struct{}
}

// Start runs argv (a wrapper such as "ip netns exec NS" may come before
// the binary) with env (nil: the test's environment).
func Start(argv, env []string) (*Server, error) {
	s := &Server{Tokens: map[string]string{}, Exited: make(chan struct{}),
		first: make(chan string, 1), listening: make(chan map[string]any, 1), banner: make(chan struct{})}
	s.Cmd = exec.Command(argv[0], argv[1:]...)
	s.Cmd.Env = env
	outPipe, err := s.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	errPipe, err := s.Cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.Cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the binary: %v", err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(errPipe)
		sent := false
		for n := 0; sc.Scan(); n++ {
			s.Stderr.Write(append(sc.Bytes(), '\n'))
			if n == 0 {
				s.first <- sc.Text()
			}
			var rec map[string]any
			if !sent && json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "listening" {
				s.listening <- rec
				sent = true
			}
		}
		close(s.first) // harmless after a send: the reader took it or never will
		_, _ = io.Copy(io.Discard, errPipe)
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(outPipe)
		closed := false
		for sc.Scan() {
			s.Stdout.Write(append(sc.Bytes(), '\n'))
			f := strings.Fields(sc.Text())
			if !closed && len(f) == 2 && slices.Contains(BannerRoles, f[0]) {
				s.Tokens[f[0]] = f[1]
				if len(s.Tokens) == len(BannerRoles) {
					closed = true
					close(s.banner)
				}
			}
		}
		_, _ = io.Copy(io.Discard, outPipe) // drain: the scanner stopped
	}()
	go func() {
		readers.Wait() // Wait must not run before the pipes are read to EOF
		_ = s.Cmd.Wait()
		s.exitCode = s.Cmd.ProcessState.ExitCode()
		close(s.Exited)
	}()
	return s, nil
}

// ExitCode is the exit status; valid once Exited is closed.
func (s *Server) ExitCode() int { return s.exitCode }

// FirstLine waits (at most guard) for the first log line.
func (s *Server) FirstLine(guard time.Duration) (string, error) {
	select {
	case line, ok := <-s.first:
		if !ok {
			return "", fmt.Errorf("the server wrote no log line; stdout:\n%s", s.Stdout.String())
		}
		return line, nil
	case <-time.After(guard):
		return "", fmt.Errorf("no log line from the server within %v", guard)
	}
}

// Listening waits (at most guard) for the first "listening" log line.
func (s *Server) Listening(guard time.Duration) (map[string]any, error) {
	select {
	case rec := <-s.listening:
		return rec, nil
	case <-s.Exited:
		return nil, fmt.Errorf("the server exited at start:\n%s", s.Stderr.String())
	case <-time.After(guard):
		return nil, fmt.Errorf("no listening line within %v:\n%s", guard, s.Stderr.String())
	}
}

// Banner waits (at most guard) for the dev banner's tokens.
func (s *Server) Banner(guard time.Duration) error {
	select {
	case <-s.banner:
		return nil
	case <-s.Exited:
		return fmt.Errorf("the server exited before printing tokens:\n%s", s.Stderr.String())
	case <-time.After(guard):
		return fmt.Errorf("no dev banner with the tokens within %v; stdout:\n%s", guard, s.Stdout.String())
	}
}

// Wait waits (at most guard) for the exit and returns its status.
func (s *Server) Wait(guard time.Duration) (int, error) {
	select {
	case <-s.Exited:
		return s.exitCode, nil
	case <-time.After(guard):
		return -1, fmt.Errorf("the server did not exit; log:\n%s", s.Stderr.String())
	}
}

// Stop sends SIGTERM and waits (at most guard) for the exit, killing a
// wedged server: none may outlive its test.
func (s *Server) Stop(guard time.Duration) error {
	select {
	case <-s.Exited:
		return nil
	default:
	}
	s.Cmd.Process.Signal(syscall.SIGTERM) // an error means it already exited
	select {
	case <-s.Exited:
		return nil
	case <-time.After(guard):
		s.Kill()
		return fmt.Errorf("the server did not stop on SIGTERM within %v", guard)
	}
}

// Kill kills the process unless it has exited, and waits for the exit.
func (s *Server) Kill() {
	select {
	case <-s.Exited:
	default:
		_ = s.Cmd.Process.Kill()
		<-s.Exited
	}
}
