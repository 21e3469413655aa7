//go:build linux

package netio

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// SO_REUSEPORT lets the mediator's own sockets share one port, but it also
// lets any other socket of the same user with SO_REUSEPORT join (or already
// hold) that port, and the kernel then hands it a share of the datagrams:
// another STUN server on the port answers our clients, and we answer its.
// So after binding, every UDP socket on the port is compared, by inode, with
// our own: a foreign one refuses the start.

// socketInode is the inode of the socket behind c (0 when unknown).
func socketInode(c syscall.RawConn) uint64 {
	var ino uint64
	_ = c.Control(func(fd uintptr) { // on error ino stays 0 and the socket counts as foreign
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil {
			ino = st.Ino
		}
	})
	return ino
}

// checkExclusive fails when a UDP socket that is not one of own is bound to
// ap's port on an address that overlaps ap's (the same, or either one the
// wildcard), in this network namespace.
func checkExclusive(ap netip.AddrPort, own map[uint64]bool) error {
	foreign, err := scanForeign([]netip.AddrPort{ap}, own)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return fmt.Errorf("cannot listen on %s: another process holds UDP port %d: %s; sharing it would give that process a share of the datagrams, so stop it or choose another address", ap, ap.Port(), describeForeign(foreign))
	}
	return nil
}

// scanForeign lists the sockets on the ports of addrs, on overlapping
// addresses, that are not in own, each once.
func scanForeign(addrs []netip.AddrPort, own map[uint64]bool) ([]foreignSocket, error) {
	var all []foreignSocket
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		found, err := foreignSockets(table, addrs, own)
		if err != nil {
			return nil, err
		}
		all = append(all, found...)
	}
	return all, nil
}

// describeForeign names each socket as "address (socket inode N[, pid P])".
// It reads every process's fds: only for an error or a log line.
func describeForeign(foreign []foreignSocket) string {
	names := make([]string, len(foreign))
	for i, f := range foreign {
		names[i] = fmt.Sprintf("%s (socket inode %d%s)", f.local, f.inode, ownerOf(f.inode))
	}
	return strings.Join(names, ", ")
}

// foreignSockets lists the sockets of table (a /proc/net/udp{,6} file) on
// the port of one of addrs, on an overlapping address, that are not in own.
func foreignSockets(table string, addrs []netip.AddrPort, own map[uint64]bool) ([]foreignSocket, error) {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return nil, nil // no IPv6 in this kernel
	}
	if err != nil {
		return nil, fmt.Errorf("cannot check that the mediator's UDP ports are its alone: %w", err)
	}
	defer f.Close()
	var foreign []foreignSocket
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		local, ok := parseProcAddr(fields[1])
		if !ok || !onPortOf(local, addrs) {
			continue
		}
		ino, err := strconv.ParseUint(fields[9], 10, 64)
		if err != nil || own[ino] {
			continue
		}
		foreign = append(foreign, foreignSocket{local: local, inode: ino})
	}
	return foreign, sc.Err()
}

// onPortOf reports whether a socket bound to local could receive datagrams
// sent to one of addrs.
func onPortOf(local netip.AddrPort, addrs []netip.AddrPort) bool {
	for _, ap := range addrs {
		if local.Port() == ap.Port() && overlaps(local.Addr(), ap.Addr()) {
			return true
		}
	}
	return false
}

// overlaps reports whether datagrams to one address could reach a socket
// bound to the other.
func overlaps(a, b netip.Addr) bool {
	a, b = a.Unmap(), b.Unmap()
	return a == b || a.IsUnspecified() || b.IsUnspecified()
}

// parseProcAddr parses /proc/net/udp's "0100007F:0D96": the address as
// 32-bit words in host byte order, then the port in hex.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	raw, herr := hex.DecodeString(h)
	if !ok || err != nil || herr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr, uint16(port)), true
}

// ownerOf names the process holding socket inode ino, when this process
// may read its fds (best effort: the error is clear without it).
func ownerOf(ino uint64) string {
	want := "socket:[" + strconv.FormatUint(ino, 10) + "]"
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + p.Name() + "/fd/" + fd.Name()); err == nil && l == want {
				comm, _ := os.ReadFile("/proc/" + p.Name() + "/comm")
				return fmt.Sprintf(", pid %d %s", pid, strings.TrimSpace(string(comm)))
			}
		}
	}
	return ""
}
