package netio

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// listen binds n SO_REUSEPORT sockets on ap (the first resolves port 0, the
// rest share its port) and fails when a socket not in own (the mediator's
// sockets, to which it adds these) is bound to the port too. A wildcard address enables PKTINFO so each answer
// leaves from the address its request reached; a specific address answers
// from itself. It returns the sockets and the buffer sizes the kernel
// granted the first one.
func listen(ap netip.AddrPort, n int, cfg *Config, own map[uint64]bool) (conns []batchConn, recv, send int, err error) {
	network := "udp4"
	if ap.Addr().Is6() {
		network = "udp6"
		if ap.Addr().IsUnspecified() {
			network = "udp" // dual-stack [::]
		}
	}
	pktinfo := ap.Addr().IsUnspecified()
	lc := net.ListenConfig{Control: controlSocket(cfg.RecvBuffer, cfg.SendBuffer, pktinfo)}
	defer func() {
		if err != nil {
			for _, c := range conns {
				_ = c.Close() // already failing; the listen error is the one to report
			}
			conns = nil
		}
	}()
	for i := 0; i < n; i++ {
		pc, lerr := lc.ListenPacket(context.Background(), network, ap.String())
		if lerr != nil {
			return conns, 0, 0, fmt.Errorf("cannot listen on %s: %w", ap, lerr)
		}
		uc := pc.(*net.UDPConn)
		rc, rerr := uc.SyscallConn()
		if rerr == nil {
			own[socketInode(rc)] = true
		}
		if i == 0 {
			ap = netip.AddrPortFrom(ap.Addr(), uint16(uc.LocalAddr().(*net.UDPAddr).Port))
			if rerr == nil {
				recv, send = bufferSizes(rc)
			}
		}
		bc, berr := newBatchConn(uc, cfg.Portable, pktinfo)
		if berr != nil {
			_ = uc.Close() // reported below
			return conns, 0, 0, fmt.Errorf("cannot set up batch I/O on %s: %w", ap, berr)
		}
		conns = append(conns, bc)
	}
	if err := checkExclusive(ap, own); err != nil {
		return conns, 0, 0, err
	}
	return conns, recv, send, nil
}
