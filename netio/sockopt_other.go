//go:build !linux

package netio

import (
	"net"
	"net/netip"
	"syscall"
)

const rawAvailable = false

// dontWait 0: portableConn.TryReadBatch reads nothing off Linux, where x/net
// reads one datagram per batch anyway.
const dontWait = 0

func newRawConn(c *net.UDPConn, pktinfo bool) (batchConn, error) { panic("BUG: raw path on non-Linux") }

// controlSocket sets nothing beyond the defaults off Linux: one socket per
// address (Config.Sockets is forced to 1 there).
func controlSocket(recv, send int, pktinfo bool) func(network, address string, c syscall.RawConn) error {
	return nil
}

func bufferSizes(c syscall.RawConn) (recv, send int) { return 0, 0 }

// socketInode and checkExclusive: off Linux there is one socket per address
// and no SO_REUSEPORT, so the bind itself fails on a port in use.
func socketInode(c syscall.RawConn) uint64 { return 0 }

func checkExclusive(ap netip.AddrPort, own map[uint64]bool) error { return nil }

// attachSteering, scanForeign, describeForeign: nor can another socket join
// later.
func attachSteering(c syscall.RawConn, n int, k steerKeys) error { return nil }

func scanForeign(addrs []netip.AddrPort, own map[uint64]bool) ([]foreignSocket, error) {
	return nil, nil
}

func describeForeign(foreign []foreignSocket) string { return "" }
