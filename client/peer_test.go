package client

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

var publishedRe = regexp.MustCompile(`^published listing ([0-9a-f-]{36})`)

// peerProc is one rendezvous-peer process (in a namespace, with a prefix).
type peerProc struct {
	cmd            *exec.Cmd
	stdout, stderr e2e.LockedBuffer
	lines          chan string
	exited         chan struct{}
}

func startPeer(t *testing.T, prefix []string, token string, args ...string) *peerProc {
	t.Helper()
	return startPeerWith(t, prefix, nil, token, args...)
}

// startPeerEnv is startPeer with extra environment variables ("K=V").
func startPeerEnv(t *testing.T, env []string, token string, args ...string) *peerProc {
	t.Helper()
	return startPeerWith(t, nil, env, token, args...)
}

func startPeerWith(t *testing.T, prefix, env []string, token string, args ...string) *peerProc {
	t.Helper()
	bin := filepath.Join(buildBinaries(t), "rendezvous-peer")
	p := &peerProc{lines: make(chan string, 256), exited: make(chan struct{})}
	argv := append(append(append([]string{}, prefix...), bin), args...)
	p.cmd = exec.Command(argv[0], argv[1:]...)
	p.cmd.Env = append(append(os.Environ(), env...), "RDV_TOKEN="+token) // not a flag: flags show in ps
	p.cmd.Stdin = strings.NewReader("")
	outR, outW := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = outW, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("cannot start rendezvous-peer: %v", err)
	}
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			p.stdout.Write(append(sc.Bytes(), '\n'))
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		p.cmd.Wait() // the status is read from ProcessState
		outW.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Signal(syscall.SIGTERM) // an error means it already exited
			select {
			case <-p.exited:
			case <-time.After(hangGuard):
				p.cmd.Process.Kill() // must not outlive the test
				<-p.exited
			}
		}
		if t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", args[0], p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

// waitLine returns the first submatch of re in a stdout line.
func (p *peerProc) waitLine(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	timer := time.NewTimer(hangGuard)
	defer timer.Stop()
	for {
		select {
		case line := <-p.lines:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[len(m)-1]
			}
		case <-p.exited:
			t.Fatalf("rendezvous-peer exited before printing %q:\n%s\n%s", re, p.stdout.String(), p.stderr.String())
		case <-timer.C:
			t.Fatalf("no line matching %q within %v", re, hangGuard)
		}
	}
}

func (p *peerProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(hangGuard):
		t.Fatalf("rendezvous-peer did not exit within %v:\n%s", hangGuard, p.stdout.String())
	}
	return -1
}

// TestPeerCLILoopback runs the rendezvous-peer walkthrough on loopback: a
// host with --echo and a joiner with --first that says two lines.
func TestPeerCLILoopback(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv := startServer(t, nil, append(storeArgs, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0")...)
		host := startPeer(t, nil, srv.tokens["publisher"], "host", "--server", srv.http, "--name", "cli test", "--echo", "--listen", "127.0.0.1:0")
		host.waitLine(t, publishedRe)
		join := startPeer(t, nil, srv.tokens["client"], "join", "--server", srv.http, "--first",
			"--say", "hello", "--say", "world", "--replies", "2", "--listen", "127.0.0.1:0")
		if code := join.wait(t); code != 0 {
			t.Fatalf("the joiner exited %d:\n%s\n%s", code, join.stdout.String(), join.stderr.String())
		}
		out := join.stdout.String()
		for _, want := range []string{"punched: direct path to 127.0.0.1:", "host says: echo: hello", "host says: echo: world"} {
			if !strings.Contains(out, want) {
				t.Fatalf("joiner output lacks %q:\n%s", want, out)
			}
		}
		host.waitLine(t, regexp.MustCompile(`says: world$`))
		for _, p := range []*peerProc{host, join} {
			if strings.Contains(p.stdout.String()+p.stderr.String(), srv.tokens["publisher"]) ||
				strings.Contains(p.stdout.String()+p.stderr.String(), srv.tokens["client"]) {
				t.Fatal("rendezvous-peer printed a token")
			}
		}
		// SIGTERM makes the host close its listing.
		host.cmd.Process.Signal(syscall.SIGTERM)
		if code := host.wait(t); code != 0 {
			t.Fatalf("the host exited %d on SIGTERM:\n%s", code, host.stderr.String())
		}
		if st := srv.stats(t); st["listings"] != 0 {
			t.Fatalf("after the host stopped the server still holds %v", st)
		}
	})
}

// TestPeerHostRepublishes: `rendezvous-peer host` says when its server goes
// away and publishes again by itself once a new server process runs on the
// same ports (it used to sit silent until its lease ran out, then exit).
// On the memory store only: that the killed server's listing is lost is
// what it tests (on the Redis store the listing outlives the process).
func TestPeerHostRepublishes(t *testing.T) {
	srv := startFileServer(t, "--presence-ttl", "3s", "--lease-ttl", "30s")
	host := startPeer(t, nil, srv.tokens["publisher"], "host", "--server", srv.http, "--name", "cli republish", "--listen", "127.0.0.1:0")
	first := host.waitLine(t, publishedRe)
	srv.kill(t)
	host.waitLine(t, regexp.MustCompile(`^the server does not answer`))
	srv.restart(t)
	host.waitLine(t, regexp.MustCompile(`^listing `+first+` lost .*not_found.*; publishing again in`))
	again := host.waitLine(t, regexp.MustCompile(`^published again as listing ([0-9a-f-]{36})$`))
	id, err := ParseListingID(again)
	if err != nil || again == first {
		t.Fatalf("republished as %q (first %s): %v", again, first, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if !browsable(t, ctx, srv.api(t, "client"), id) {
		t.Fatal("the republished listing is not browsable")
	}
	host.cmd.Process.Signal(syscall.SIGTERM)
	if code := host.wait(t); code != 0 {
		t.Fatalf("the host exited %d on SIGTERM:\n%s", code, host.stderr.String())
	}
}
