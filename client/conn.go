package client

import (
	"net"
	"net/netip"
	"time"
)

// PacketConn is the UDP socket the SDK runs on. *net.UDPConn implements it.
// Tests substitute wrappers (for example one that drops chosen datagrams).
//
// The AddrPort forms are used because they do not allocate per datagram.
type PacketConn interface {
	ReadFromUDPAddrPort(b []byte) (n int, addr netip.AddrPort, err error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	LocalAddr() net.Addr
	SetReadDeadline(t time.Time) error
	Close() error
}

var _ PacketConn = (*net.UDPConn)(nil)

// ListenUDP opens a UDP socket on addr ("0.0.0.0:0", "127.0.0.1:0", "[::]:0").
func ListenUDP(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, &ConfigError{Field: "udp address", Reason: err.Error()}
	}
	c, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, &ConfigError{Field: "udp address", Reason: "cannot listen: " + err.Error()}
	}
	return c, nil
}

// openConn returns conn, or when it is nil a socket opened on listenAddr
// (default "0.0.0.0:0"); own reports that the SDK opened the socket and
// must close it.
func openConn(conn PacketConn, listenAddr string) (c PacketConn, own bool, err error) {
	if conn != nil {
		return conn, false, nil
	}
	if listenAddr == "" {
		listenAddr = "0.0.0.0:0"
	}
	uc, err := ListenUDP(listenAddr)
	if err != nil {
		return nil, false, err
	}
	return uc, true, nil
}

// localEndpoint returns the LAN endpoint the peer should try: the socket's
// bound address when it is specific, else the source address the kernel
// would choose toward toward (found by connecting a throwaway UDP socket,
// which sends nothing), with the socket's port.
func localEndpoint(c PacketConn, toward netip.AddrPort) netip.AddrPort {
	ua, ok := c.LocalAddr().(*net.UDPAddr)
	if !ok {
		return netip.AddrPort{}
	}
	bound := ua.AddrPort()
	ip := bound.Addr().Unmap()
	if ip.IsValid() && !ip.IsUnspecified() {
		return netip.AddrPortFrom(ip, bound.Port())
	}
	probe, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(toward))
	if err != nil {
		return netip.AddrPort{}
	}
	defer probe.Close() // a throwaway socket: nothing to report on close
	src := probe.LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	return netip.AddrPortFrom(src, bound.Port())
}
