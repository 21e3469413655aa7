//go:build linux

package netio

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

const rawAvailable = true

// rawConn calls recvmmsg and sendmmsg through the socket's syscall.RawConn
// with pre-allocated mmsghdr, iovec, sockaddr and control arrays, so a batch
// allocates nothing (x/net's ReadBatch allocates an address per message,
// golang/go#26838). Read arrays belong to the ReadBatch caller, write arrays
// to the WriteBatch caller.
type rawConn struct {
	conn    *net.UDPConn
	rc      syscall.RawConn
	v6      bool // AF_INET6 socket (possibly dual-stack)
	pktinfo bool
	local   netip.AddrPort

	r, w  mmsgArrays
	rpkts []packet
	rn    int
	rerr  syscall.Errno
	wn    int
	woff  int
	wcnt  int
	werr  syscall.Errno

	readFn, tryReadFn, writeFn func(fd uintptr) bool
}

type mmsgArrays struct {
	msgs  []unix.Mmsghdr
	iov   []unix.Iovec
	names []unix.RawSockaddrInet6
	ctl   []byte
}

func newMmsgArrays(n int) mmsgArrays {
	a := mmsgArrays{
		msgs:  make([]unix.Mmsghdr, n),
		iov:   make([]unix.Iovec, n),
		names: make([]unix.RawSockaddrInet6, n),
		ctl:   make([]byte, n*ctlSlot),
	}
	for i := range a.msgs {
		a.msgs[i].Hdr.Iov = &a.iov[i]
		a.msgs[i].Hdr.SetIovlen(1)
		a.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&a.names[i]))
	}
	return a
}

func newRawConn(c *net.UDPConn, pktinfo bool) (*rawConn, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	local := c.LocalAddr().(*net.UDPAddr).AddrPort()
	r := &rawConn{
		conn: c, rc: rc, pktinfo: pktinfo,
		local: netip.AddrPortFrom(local.Addr().Unmap(), local.Port()),
		r:     newMmsgArrays(batchSize),
		w:     newMmsgArrays(batchSize * answersPerRequest),
	}
	var domain int
	if cerr := rc.Control(func(fd uintptr) {
		domain, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
	}); cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	r.v6 = domain == unix.AF_INET6
	r.readFn = r.doRead
	r.tryReadFn = r.doTryRead
	r.writeFn = r.doWrite
	return r, nil
}

func (c *rawConn) LocalAddr() netip.AddrPort { return c.local }
func (c *rawConn) Close() error              { return c.conn.Close() }

// WriteTo sends one datagram; net maps an IPv4 addr for an AF_INET6 socket.
func (c *rawConn) WriteTo(b []byte, addr netip.AddrPort) error {
	_, err := c.conn.WriteToUDPAddrPort(b, addr)
	return err
}

func (c *rawConn) ReadBatch(pkts []packet) (int, error) { return c.read(pkts, c.readFn) }

func (c *rawConn) TryReadBatch(pkts []packet) (int, error) {
	if len(pkts) == 0 {
		return 0, nil
	}
	return c.read(pkts, c.tryReadFn)
}

// read runs one recvmmsg into pkts through fn, doRead (waits for a
// datagram) or doTryRead (does not).
func (c *rawConn) read(pkts []packet, fn func(fd uintptr) bool) (int, error) {
	n := min(len(pkts), len(c.r.msgs))
	for i := 0; i < n; i++ {
		m := &c.r.msgs[i]
		c.r.iov[i].Base = unsafe.SliceData(pkts[i].buf[:cap(pkts[i].buf)])
		c.r.iov[i].SetLen(cap(pkts[i].buf))
		m.Hdr.Namelen = unix.SizeofSockaddrInet6
		m.Hdr.Flags = 0
		m.Len = 0
		if c.pktinfo {
			m.Hdr.Control = &c.r.ctl[i*ctlSlot]
			m.Hdr.SetControllen(ctlSlot)
		} else {
			m.Hdr.Control = nil
			m.Hdr.SetControllen(0)
		}
	}
	c.rn, c.rerr = n, 0
	if err := c.rc.Read(fn); err != nil {
		return 0, err
	}
	if c.rerr != 0 {
		return 0, c.rerr
	}
	for i := 0; i < c.rn; i++ {
		m := &c.r.msgs[i]
		p := &pkts[i]
		p.buf = p.buf[:m.Len]
		p.trunc = m.Hdr.Flags&unix.MSG_TRUNC != 0
		p.addr = decodeSockaddr(&c.r.names[i])
		p.local = netip.Addr{}
		if c.pktinfo {
			p.local = parsePktinfo(c.r.ctl[i*ctlSlot : i*ctlSlot+int(m.Hdr.Controllen)])
		}
	}
	return c.rn, nil
}

// doRead and doWrite use RawSyscall6: the socket is non-blocking (the
// runtime's poller made it so), so recvmmsg and sendmmsg never block, and
// skipping entersyscall/exitsyscall keeps the reader's P. With Syscall6 a
// sendmmsg of a full batch often outlasts sysmon's 20 µs tick: sysmon then
// hands the P off (a thread wake-up, and another to get it back in
// exitsyscall) and, having retaken something, keeps polling every 20 µs
// instead of backing off — a measurable share of the server's CPU under load
// (docs/benchmarks/udp.md). The cost: one batch's syscall (tens of µs) delays
// a stop-the-world by as much.
func (c *rawConn) doRead(fd uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, fd,
			uintptr(unsafe.Pointer(&c.r.msgs[0])), uintptr(c.rn), 0, 0, 0)
		switch errno {
		case 0:
			c.rn = int(n)
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.rerr = errno
		return true
	}
}

// doTryRead is doRead that returns to the caller on EAGAIN, with no
// datagram, instead of letting the poller wait for one.
func (c *rawConn) doTryRead(fd uintptr) bool {
	if !c.doRead(fd) {
		c.rn = 0
	}
	return true
}

func (c *rawConn) WriteBatch(pkts []packet) (sent, failed int, err error) {
	for len(pkts) > 0 {
		n := min(len(pkts), len(c.w.msgs))
		for i := 0; i < n; i++ {
			c.fillWrite(i, &pkts[i])
		}
		for c.woff = 0; c.woff < n; {
			c.wcnt, c.wn, c.werr = n, 0, 0
			if err := c.rc.Write(c.writeFn); err != nil {
				return sent, failed, err
			}
			switch {
			case c.werr == unix.EBADF:
				return sent, failed, net.ErrClosed
			case c.werr != 0:
				// The message at woff was refused (unreachable route, bad
				// PKTINFO source...): skip it, send the rest.
				failed++
				c.woff++
			default:
				sent += c.wn
				c.woff += c.wn
			}
		}
		pkts = pkts[n:]
	}
	return sent, failed, nil
}

func (c *rawConn) doWrite(fd uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, fd,
			uintptr(unsafe.Pointer(&c.w.msgs[c.woff])), uintptr(c.wcnt-c.woff), 0, 0, 0)
		switch errno {
		case 0:
			c.wn = int(n)
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		c.werr = errno
		return true
	}
}

func (c *rawConn) fillWrite(i int, p *packet) {
	m := &c.w.msgs[i]
	c.w.iov[i].Base = unsafe.SliceData(p.buf)
	c.w.iov[i].SetLen(len(p.buf))
	m.Hdr.Namelen = encodeSockaddr(&c.w.names[i], p.addr, c.v6)
	m.Hdr.Flags = 0
	m.Len = 0
	m.Hdr.Control = nil
	m.Hdr.SetControllen(0)
	if c.pktinfo && p.local.IsValid() {
		ctl := c.w.ctl[i*ctlSlot : (i+1)*ctlSlot]
		m.Hdr.Control = &ctl[0]
		m.Hdr.SetControllen(encodePktinfo(ctl, p.local, c.v6))
	}
}

func decodeSockaddr(sa *unix.RawSockaddrInet6) netip.AddrPort {
	port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
	}
	return netip.AddrPort{}
}

func encodeSockaddr(sa *unix.RawSockaddrInet6, a netip.AddrPort, v6 bool) uint32 {
	if !v6 {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		sa4.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa4.Port))[:], a.Port())
		sa4.Addr = a.Addr().Unmap().As4()
		sa4.Zero = [8]byte{}
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], a.Port())
	sa.Flowinfo = 0
	sa.Addr = a.Addr().As16()
	sa.Scope_id = 0
	return unix.SizeofSockaddrInet6
}

// parsePktinfo returns the destination address from an IP_PKTINFO or
// IPV6_PKTINFO control message (unmapped).
func parsePktinfo(ctl []byte) netip.Addr {
	for len(ctl) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
		l := int(h.Len)
		if l < unix.SizeofCmsghdr || l > len(ctl) {
			return netip.Addr{}
		}
		data := ctl[unix.SizeofCmsghdr:l]
		switch {
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&data[0]))
			return netip.AddrFrom4(info.Addr)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&data[0]))
			return netip.AddrFrom16(info.Addr).Unmap()
		}
		next := unix.CmsgSpace(l - unix.SizeofCmsghdr)
		if next > len(ctl) {
			break
		}
		ctl = ctl[next:]
	}
	return netip.Addr{}
}

// encodePktinfo writes a control message choosing the answer's source
// address and returns its length.
func encodePktinfo(ctl []byte, src netip.Addr, v6 bool) int {
	clear(ctl)
	h := (*unix.Cmsghdr)(unsafe.Pointer(&ctl[0]))
	data := unsafe.Pointer(&ctl[unix.CmsgLen(0)])
	if v6 {
		h.Level, h.Type = unix.IPPROTO_IPV6, unix.IPV6_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
		(*unix.Inet6Pktinfo)(data).Addr = src.As16()
		return unix.CmsgSpace(unix.SizeofInet6Pktinfo)
	}
	h.Level, h.Type = unix.IPPROTO_IP, unix.IP_PKTINFO
	h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
	(*unix.Inet4Pktinfo)(data).Spec_dst = src.Unmap().As4()
	return unix.CmsgSpace(unix.SizeofInet4Pktinfo)
}

var _ batchConn = (*rawConn)(nil)
