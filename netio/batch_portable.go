package netio

import (
	"errors"
	"net"
	"net/netip"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// portableConn is the batch path on every platform, built on x/net's
// ipv4/ipv6 ReadBatch and WriteBatch (recvmmsg/sendmmsg on Linux, single
// reads elsewhere). It allocates a net.Addr per received datagram
// (golang/go#26838) and, with pktinfo, a control message per answer; Linux
// uses rawConn instead unless Config.Portable is set.
type portableConn struct {
	conn    *net.UDPConn
	p4      *ipv4.PacketConn
	p6      *ipv6.PacketConn
	v6      bool
	pktinfo bool
	local   netip.AddrPort
	rmsgs   []ipv4.Message // ipv4.Message and ipv6.Message are the same type
	wmsgs   []ipv4.Message
	raddrs  []net.UDPAddr
	waddrs  []net.UDPAddr
}

func newPortableConn(c *net.UDPConn, pktinfo bool) *portableConn {
	local := c.LocalAddr().(*net.UDPAddr).AddrPort()
	p := &portableConn{
		conn: c, pktinfo: pktinfo,
		local: netip.AddrPortFrom(local.Addr().Unmap(), local.Port()),
		v6:    local.Addr().Is6() && !local.Addr().Is4In6(),
		rmsgs: make([]ipv4.Message, batchSize),
		wmsgs: make([]ipv4.Message, batchSize*answersPerRequest),
	}
	p.waddrs = make([]net.UDPAddr, len(p.wmsgs))
	for i := range p.rmsgs {
		p.rmsgs[i].Buffers = make([][]byte, 1)
		if pktinfo {
			p.rmsgs[i].OOB = make([]byte, ctlSlot)
		}
	}
	for i := range p.wmsgs {
		p.wmsgs[i].Buffers = make([][]byte, 1)
	}
	if p.v6 {
		p.p6 = ipv6.NewPacketConn(c)
		if pktinfo {
			_ = p.p6.SetControlMessage(ipv6.FlagDst, true) // without it answers leave from the route's source
		}
	} else {
		p.p4 = ipv4.NewPacketConn(c)
		if pktinfo {
			_ = p.p4.SetControlMessage(ipv4.FlagDst, true) // as above
		}
	}
	return p
}

func (c *portableConn) LocalAddr() netip.AddrPort { return c.local }
func (c *portableConn) Close() error              { return c.conn.Close() }

// WriteTo sends one datagram; net maps an IPv4 addr for an AF_INET6 socket.
func (c *portableConn) WriteTo(b []byte, addr netip.AddrPort) error {
	_, err := c.conn.WriteToUDPAddrPort(b, addr)
	return err
}

func (c *portableConn) ReadBatch(pkts []packet) (int, error) { return c.read(pkts, 0) }

// TryReadBatch reads with MSG_DONTWAIT, which x/net passes to recvmmsg and
// then returns at once (EAGAIN when nothing is queued); off Linux it reads
// nothing.
func (c *portableConn) TryReadBatch(pkts []packet) (int, error) {
	if dontWait == 0 || len(pkts) == 0 {
		return 0, nil
	}
	n, err := c.read(pkts, dontWait)
	if errors.Is(err, syscall.EAGAIN) {
		return 0, nil
	}
	return n, err
}

// read is one x/net ReadBatch into pkts with the recvmmsg flags.
func (c *portableConn) read(pkts []packet, flags int) (int, error) {
	n := min(len(pkts), len(c.rmsgs))
	ms := c.rmsgs[:n]
	for i := range ms {
		ms[i].Buffers[0] = pkts[i].buf[:cap(pkts[i].buf)]
		if c.pktinfo {
			ms[i].OOB = ms[i].OOB[:cap(ms[i].OOB)]
		}
	}
	var err error
	if c.v6 {
		n, err = c.p6.ReadBatch(ms, flags)
	} else {
		n, err = c.p4.ReadBatch(ms, flags)
	}
	if err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		m := &ms[i]
		p := &pkts[i]
		p.buf = p.buf[:m.N]
		p.trunc = m.N > 0 && m.N == cap(p.buf) // cannot tell exactly here: a full slot is treated as oversize
		p.local = netip.Addr{}
		if ua, ok := m.Addr.(*net.UDPAddr); ok {
			ap := ua.AddrPort()
			p.addr = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		}
		if c.pktinfo && m.NN > 0 {
			p.local = c.parseDst(m.OOB[:m.NN])
		}
	}
	return n, nil
}

func (c *portableConn) parseDst(oob []byte) netip.Addr {
	var ip net.IP
	if c.v6 {
		var cm ipv6.ControlMessage
		if cm.Parse(oob) == nil {
			ip = cm.Dst
		}
	} else {
		var cm ipv4.ControlMessage
		if cm.Parse(oob) == nil {
			ip = cm.Dst
		}
	}
	a, _ := netip.AddrFromSlice(ip)
	return a.Unmap()
}

func (c *portableConn) WriteBatch(pkts []packet) (sent, failed int, err error) {
	for len(pkts) > 0 {
		n := min(len(pkts), len(c.wmsgs))
		ms := c.wmsgs[:n]
		for i := range ms {
			p := &pkts[i]
			ms[i].Buffers[0] = p.buf
			a := p.addr.Addr()
			if c.v6 {
				a = netip.AddrFrom16(a.As16())
			}
			c.waddrs[i] = net.UDPAddr{IP: a.AsSlice(), Port: int(p.addr.Port())}
			ms[i].Addr = &c.waddrs[i]
			ms[i].OOB = nil
			if c.pktinfo && p.local.IsValid() {
				if c.v6 {
					ms[i].OOB = (&ipv6.ControlMessage{Src: netip.AddrFrom16(p.local.As16()).AsSlice()}).Marshal()
				} else {
					ms[i].OOB = (&ipv4.ControlMessage{Src: p.local.AsSlice()}).Marshal()
				}
			}
		}
		for off := 0; off < n; {
			var k int
			var werr error
			if c.v6 {
				k, werr = c.p6.WriteBatch(ms[off:], 0)
			} else {
				k, werr = c.p4.WriteBatch(ms[off:], 0)
			}
			if werr != nil {
				if isClosed(werr) {
					return sent, failed, werr
				}
				failed++
				k++ // skip the refused datagram
			} else {
				sent += k
			}
			off += k
		}
		pkts = pkts[n:]
	}
	return sent, failed, nil
}

var _ batchConn = (*portableConn)(nil)
