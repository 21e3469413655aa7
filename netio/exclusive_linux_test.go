//go:build linux

package netio

import (
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// reusePortSocket binds a UDP socket with SO_REUSEPORT on addr, as another
// STUN server (coturn) or a second process of the same user would.
func reusePortSocket(t *testing.T, addr string) *net.UDPConn {
	t.Helper()
	return reusePortOn(t, "udp4", addr)
}

func newTestMediator(addr string, sockets int) (*Mediator, error) {
	keys := engine.NewKeyring(testKey)
	st, err := memstore.New(engine.DefaultLimits(), engine.NewManualClock(), keys)
	if err != nil {
		return nil, err
	}
	return NewMediator(Config{Addrs: []string{addr}, Sockets: sockets, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, st, keys)
}

// TestMediatorRefusesSharedPort: with a foreign SO_REUSEPORT socket already
// on the port (the same address, or the wildcard), the mediator refuses to
// start, naming the port, instead of joining the group and losing a share of
// its datagrams; its own sockets still share a free port.
func TestMediatorRefusesSharedPort(t *testing.T) {
	foreign := reusePortSocket(t, "127.0.0.1:0")
	port := foreign.LocalAddr().(*net.UDPAddr).Port
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port)).String()
	m, err := newTestMediator(addr, 4)
	if err == nil {
		_ = m.Close()
		t.Fatalf("the mediator started on %s, held by another socket", addr)
	}
	if !strings.Contains(err.Error(), "another process holds UDP port") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("unclear error: %v", err)
	}

	wild := reusePortSocket(t, "0.0.0.0:0")
	wport := wild.LocalAddr().(*net.UDPAddr).Port
	waddr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(wport)).String()
	if m, err := newTestMediator(waddr, 2); err == nil {
		_ = m.Close()
		t.Fatalf("the mediator started on %s under a foreign wildcard socket", waddr)
	}

	// Its own sockets share a port: four on a free one start, and the
	// port is free again after Close.
	m, err = newTestMediator("127.0.0.1:0", 4)
	if err != nil {
		t.Fatalf("own sockets refused: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestParseProcAddr: /proc/net/udp's addresses are words in host order.
func TestParseProcAddr(t *testing.T) {
	ap, ok := parseProcAddr("0100007F:0D96")
	if !ok || ap != netip.MustParseAddrPort("127.0.0.1:3478") {
		t.Fatalf("got %v %v", ap, ok)
	}
	ap, ok = parseProcAddr("00000000000000000000000001000000:0D96")
	if !ok || ap != netip.MustParseAddrPort("[::1]:3478") {
		t.Fatalf("got %v %v", ap, ok)
	}
	if _, ok := parseProcAddr("zz:1"); ok {
		t.Fatal("parsed garbage")
	}
}
