package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ownServer is a rendezvous process the tester started itself
// (--server-bin): on loopback, ports chosen by the kernel, with a principals
// file generated for the run. Its log goes to <out>/server.log.
type ownServer struct {
	cmd  *exec.Cmd
	dir  string // the generated principals and tokens
	done chan struct{}
}

// ownServerStart bounds the wait for the server's first log line.
const ownServerStart = 30 * time.Second

// startOwnServer starts cfg.ServerBin and points cfg at it: HTTPAddr, the
// generated TokensFile and ServerPID (so RSS, CPU and fds come from /proc).
func startOwnServer(cfg *Config) (*ownServer, error) {
	dir, err := os.MkdirTemp("", "rendezvous-load-")
	if err != nil {
		return nil, fmt.Errorf("cannot create a directory for the principals: %w", err)
	}
	s := &ownServer{dir: dir, done: make(chan struct{})}
	fail := func(err error) (*ownServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	// Enough publishers for the listings at the owner quota twice over (the
	// soak's creates add to them), and at least the 260 shed mode needs to
	// fill the default 25,000 listings.
	pubs := max(260, 2*cfg.Listings/cfg.OwnerQuota+4)
	principals, tokens, err := makePrincipals("demo", "dev", pubs, 4)
	if err != nil {
		return fail(err)
	}
	pFile, tFile := filepath.Join(dir, "principals.json"), filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(pFile, principals, 0o600); err != nil {
		return fail(fmt.Errorf("cannot write principals: %w", err))
	}
	if err := os.WriteFile(tFile, tokens, 0o600); err != nil {
		return fail(fmt.Errorf("cannot write tokens: %w", err))
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return fail(fmt.Errorf("cannot create output directory: %w", err))
	}
	logFile, err := os.Create(filepath.Join(cfg.Out, "server.log"))
	if err != nil {
		return fail(fmt.Errorf("cannot create server.log: %w", err))
	}
	args := append([]string{"--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--log-format", "json",
		"--principals", pFile, "--drain-window", "1s"}, strings.Fields(cfg.ServerArgs)...)
	s.cmd = exec.Command(cfg.ServerBin, args...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		logFile.Close()
		return fail(err)
	}
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return fail(&ConfigError{"server-bin", err.Error()})
	}
	go func() {
		s.cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	type first struct {
		http string
		err  error
	}
	firstCh := make(chan first, 1)
	go func() {
		br := bufio.NewReader(stderr)
		line, err := br.ReadBytes('\n')
		logFile.Write(line)
		var f first
		if err != nil {
			f.err = fmt.Errorf("the server exited before naming its addresses (see %s)", logFile.Name())
		} else if f.http = serverHTTPAddr(line); f.http == "" {
			f.err = fmt.Errorf("the server's first log line names no addresses (see %s)", logFile.Name())
		}
		firstCh <- f
		io.Copy(logFile, br) // until the server exits
	}()
	select {
	case f := <-firstCh:
		if f.err != nil {
			s.stop()
			return nil, f.err
		}
		cfg.HTTPAddr, cfg.TokensFile, cfg.ServerPID = f.http, tFile, s.cmd.Process.Pid
		return s, nil
	case <-time.After(ownServerStart):
		s.stop()
		return nil, fmt.Errorf("the server named no addresses within %s", ownServerStart)
	}
}

// stop ends the server with SIGTERM (its drain window is 1s unless
// --server-args says otherwise), killing it if it has not exited after 40s,
// and removes the generated principals.
func (s *ownServer) stop() {
	stopServer(s.cmd.Process, s.done)
	os.RemoveAll(s.dir)
}

// serverHTTPAddr returns the HTTP address named by the server's first log
// line (JSON with its "http" and "udp" addresses), or "" when the line
// names neither.
func serverHTTPAddr(line []byte) string {
	var first struct{ HTTP, UDP string }
	if err := json.Unmarshal(line, &first); err != nil || first.HTTP == "" || first.UDP == "" {
		return ""
	}
	return first.HTTP
}

// stopServer ends a server with SIGTERM, killing it if it has not exited
// after 40s; done closes once the process has been waited for.
func stopServer(p *os.Process, done <-chan struct{}) {
	p.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(40 * time.Second): // the drain window is 30s at most
		p.Kill()
		<-done
	}
}
