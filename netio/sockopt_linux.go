//go:build linux

package netio

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// dontWait is the recvmmsg flag of portableConn.TryReadBatch.
const dontWait = unix.MSG_DONTWAIT

// controlSocket runs before bind: SO_REUSEPORT so several sockets share one
// address (after bind, listen attaches the program that fans datagrams out
// over them, steer_linux.go), and large buffers.
// It tries SO_RCVBUFFORCE/SO_SNDBUFFORCE first (they pass rmem_max when the
// process has CAP_NET_ADMIN) and falls back to SO_RCVBUF/SO_SNDBUF.
func controlSocket(recv, send int, pktinfo bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			s := int(fd)
			if serr = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); serr != nil {
				return
			}
			if unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, recv) != nil {
				_ = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_RCVBUF, recv) // capped at rmem_max; reported by bufferSizes
			}
			if unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, send) != nil {
				_ = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_SNDBUF, send) // as above
			}
			if pktinfo {
				if network == "udp6" {
					serr = unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
				} else {
					serr = unix.SetsockoptInt(s, unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
				}
			}
		})
		if err != nil {
			return err
		}
		return serr
	}
}

// bufferSizes reports what the kernel granted (Linux reports twice the
// usable size it books; that is the figure returned).
func bufferSizes(c syscall.RawConn) (recv, send int) {
	_ = c.Control(func(fd uintptr) { // on error the sizes stay 0, which the caller reports as such
		recv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		send, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	return recv, send
}
