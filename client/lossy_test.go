package client

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
)

// lossyConn wraps a UDP socket and drops the datagrams chosen by its
// predicates, in either direction, counting what it dropped.
type lossyConn struct {
	*net.UDPConn
	mu          sync.Mutex
	dropOut     func(b []byte, to netip.AddrPort) bool
	dropIn      func(b []byte, from netip.AddrPort) bool
	out, in     atomic.Int64 // datagrams dropped
	sent, recvd atomic.Int64 // datagrams passed
}

var _ PacketConn = (*lossyConn)(nil)

func newLossy(t testing.TB) *lossyConn { t.Helper(); return newLossyOn(t, net.IPv4(127, 0, 0, 1)) }

func newLossyOn(t testing.TB, ip net.IP) *lossyConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatalf("cannot listen: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &lossyConn{UDPConn: c}
}

func (l *lossyConn) setDrop(out func([]byte, netip.AddrPort) bool, in func([]byte, netip.AddrPort) bool) {
	l.mu.Lock()
	l.dropOut, l.dropIn = out, in
	l.mu.Unlock()
}

func (l *lossyConn) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	l.mu.Lock()
	f := l.dropOut
	l.mu.Unlock()
	if f != nil && f(b, to) {
		l.out.Add(1)
		return len(b), nil
	}
	l.sent.Add(1)
	return l.UDPConn.WriteToUDPAddrPort(b, to)
}

func (l *lossyConn) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	for {
		n, from, err := l.UDPConn.ReadFromUDPAddrPort(b)
		if err != nil {
			return n, from, err
		}
		l.mu.Lock()
		f := l.dropIn
		l.mu.Unlock()
		if f != nil && f(b[:n], from) {
			l.in.Add(1)
			continue
		}
		l.recvd.Add(1)
		return n, from, nil
	}
}

func (l *lossyConn) addr() netip.AddrPort {
	return l.LocalAddr().(*net.UDPAddr).AddrPort()
}

// dropFirst returns a predicate dropping the first n datagrams match accepts.
func dropFirst(n int64, match func([]byte) bool) func([]byte, netip.AddrPort) bool {
	var seen atomic.Int64
	return func(b []byte, _ netip.AddrPort) bool {
		return match(b) && seen.Add(1) <= n
	}
}
