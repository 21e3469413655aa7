package netio

import (
	"net/netip"
	"slices"
	"time"
)

// foreignCheckEvery is how often a started mediator looks for sockets of
// other processes on its UDP ports. Its program (steer_linux.go) already
// keeps a socket that joins its SO_REUSEPORT group from getting datagrams;
// the check tells the operator, and covers what a program cannot: a socket
// bound to a more specific address or to a device on the port takes the
// datagrams sent to that address or arriving on that device. One scan of
// /proc/net/udp{,6}: cheap, and off the datagram path.
const foreignCheckEvery = 10 * time.Second

// foreignSocket is a UDP socket on one of the mediator's ports, on an
// address whose datagrams it could receive, that is not the mediator's.
type foreignSocket struct {
	local netip.AddrPort
	inode uint64
}

// portWatch is the state of watchPort, which alone uses it.
type portWatch struct {
	inodes  []uint64 // the foreign sockets seen last, sorted
	err     string   // the last scan or attach error logged, "" after a clean check
	resteer bool     // a re-attach failed and was logged
}

// watchPort checks the ports every m.foreignEvery until Close.
func (m *Mediator) watchPort() {
	defer m.wg.Done()
	t := time.NewTicker(m.foreignEvery)
	defer t.Stop()
	var w portWatch
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
			m.checkPort(&w)
		}
	}
}

// checkPort scans the ports once: it sets the foreign sockets gauge and logs
// when the set of foreign sockets changes (once per change, not per check).
// While foreign sockets are present it re-attaches each group's program:
// any member of a group may replace or detach it.
func (m *Mediator) checkPort(w *portWatch) {
	foreign, err := scanForeign(m.addrs, m.own)
	if err != nil {
		if msg := err.Error(); msg != w.err {
			m.log.Warn("cannot check the UDP ports for other processes' sockets", "err", err)
			w.err = msg
		}
		return
	}
	w.err = ""
	inodes := make([]uint64, len(foreign))
	for i, f := range foreign {
		inodes[i] = f.inode
	}
	slices.Sort(inodes)
	inodes = slices.Compact(inodes)
	if !slices.Equal(inodes, w.inodes) {
		w.inodes = inodes
		m.met.foreign.Set(float64(len(inodes)))
		if len(inodes) > 0 {
			m.log.Warn("another process has bound a socket on the mediator's UDP port; datagrams to the mediator's own address still reach only its sockets, but one bound to a more specific address or to a device takes the datagrams sent there: stop that process",
				"addrs", m.addrs, "foreign", describeForeign(foreign))
		} else {
			m.log.Info("no other process's socket is left on the mediator's UDP ports", "addrs", m.addrs)
		}
	}
	if len(inodes) == 0 {
		w.resteer = false
		return
	}
	if m.closed.Load() {
		return // Close is closing the sockets
	}
	for _, g := range m.groups {
		if err := attachSteering(g.ctl, len(g.conns), m.steer); err != nil && !w.resteer {
			m.log.Warn("cannot re-attach the UDP port's reuseport program", "err", err)
			w.resteer = true
		}
	}
}
