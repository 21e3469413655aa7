//go:build linux

package main

import (
	"context"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reusePort is a ListenConfig setting SO_REUSEPORT, as a second STUN server
// (coturn) or another process of the same user binds.
var reusePort = net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
		return err
	}
	return serr
}}

// runBriefly runs the server with args; one that starts is stopped after a
// second (and the test fails on its exit code 0).
func runBriefly(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out, errs strings.Builder
	code := run(ctx, append([]string{"--dev", "--log-format", "json"}, args...), func(string) string { return "" }, &out, &errs)
	return code, errs.String()
}

// TestPortsAreExclusive: with a foreign socket already bound with
// SO_REUSEPORT on the UDP port, or listening on the HTTP port, the server
// refuses to start and says which port another process holds.
func TestPortsAreExclusive(t *testing.T) {
	udp, err := reusePort.ListenPacket(context.Background(), "udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	code, stderr := runBriefly(t, "--http-addr", "127.0.0.1:0", "--udp-addr", udp.LocalAddr().String())
	if code == 0 || !strings.Contains(stderr, "another process holds UDP port") {
		t.Fatalf("started beside a foreign UDP socket on %s: exit %d, stderr:\n%s", udp.LocalAddr(), code, stderr)
	}

	tcp, err := reusePort.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	code, stderr = runBriefly(t, "--http-addr", tcp.Addr().String(), "--udp-addr", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "another process holds TCP port") {
		t.Fatalf("started beside a foreign listener on %s: exit %d, stderr:\n%s", tcp.Addr(), code, stderr)
	}
}
