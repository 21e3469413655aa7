package netio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"syscall"
)

// socketGroup is the SO_REUSEPORT group of one listen address.
type socketGroup struct {
	conns      []batchConn
	recv, send int             // the buffer sizes the kernel granted the first socket
	ctl        syscall.RawConn // the first socket, to (re-)attach the group's program
}

// listen binds n SO_REUSEPORT sockets on ap (the first resolves port 0, the
// rest share its port) and fails when a socket not in own (the mediator's
// sockets, to which it adds these) is bound to the port too; then it
// attaches the program that keeps the port's datagrams to these n sockets
// (steer_linux.go) with the hash keys k. A wildcard address enables
// PKTINFO so each answer leaves from the address its request reached; a
// specific address answers from itself.
func listen(ap netip.AddrPort, n int, cfg *Config, own map[uint64]bool, k steerKeys) (g socketGroup, err error) {
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
			for _, c := range g.conns {
				_ = c.Close() // already failing; the listen error is the one to report
			}
			g = socketGroup{}
		}
	}()
	for i := 0; i < n; i++ {
		pc, lerr := lc.ListenPacket(context.Background(), network, ap.String())
		if lerr != nil {
			return g, fmt.Errorf("cannot listen on %s: %w", ap, lerr)
		}
		uc := pc.(*net.UDPConn)
		rc, rerr := uc.SyscallConn()
		if rerr == nil {
			own[socketInode(rc)] = true
		}
		if i == 0 {
			ap = netip.AddrPortFrom(ap.Addr(), uint16(uc.LocalAddr().(*net.UDPAddr).Port))
			if rerr != nil {
				_ = uc.Close() // reported below
				return g, fmt.Errorf("cannot listen on %s: %w", ap, rerr)
			}
			g.recv, g.send = bufferSizes(rc)
			g.ctl = rc
		}
		bc, berr := newBatchConn(uc, cfg.Portable, pktinfo)
		if berr != nil {
			_ = uc.Close() // reported below
			return g, fmt.Errorf("cannot set up batch I/O on %s: %w", ap, berr)
		}
		g.conns = append(g.conns, bc)
	}
	// The check comes first: a second server started on the port joins the
	// group, finds the first one's sockets and leaves, and must not replace
	// the group's program on its way.
	if err := checkExclusive(ap, own); err != nil {
		return g, err
	}
	if err := attachSteering(g.ctl, n, k); err != nil {
		return g, fmt.Errorf("on %s: %w", ap, err)
	}
	return g, nil
}

// steerKeys key the hash by which a group's program spreads flows over its
// sockets (steer_linux.go).
type steerKeys [2]uint32

func newSteerKeys() steerKeys { return steerKeys{rand.Uint32(), rand.Uint32()} }
