package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// build is the server and the load tester, built once per test run.
var build = e2e.NewBuild("./cmd/rendezvous", "./cmd/rendezvous-load")

func TestMain(m *testing.M) {
	code := m.Run()
	build.Remove()
	os.Exit(code)
}

// buildBinary returns the path of the module's command pkg (one of
// build's), built on first use.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	bin, err := build.Path(filepath.Base(pkg))
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startServer runs the real server with its default ceilings on loopback
// and returns its HTTP address once the first log line names it.
func startServer(t *testing.T, bin string, args ...string) (*e2e.Server, string) {
	t.Helper()
	srv, err := e2e.Start(append([]string{bin, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0", "--log-format", "json"}, args...), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopServer(srv.Cmd.Process, srv.Exited) })
	line, err := srv.FirstLine(time.Minute)
	if err != nil {
		t.Fatalf("the server printed no log line: %v", err)
	}
	httpAddr := serverHTTPAddr([]byte(line))
	if httpAddr == "" {
		t.Fatalf("first log line names no addresses: %q", line)
	}
	return srv, httpAddr
}
