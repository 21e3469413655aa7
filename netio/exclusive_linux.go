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
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		foreign, err := foreignSockets(table, ap, own)
		if err != nil {
			return err
		}
		if len(foreign) > 0 {
			return fmt.Errorf("cannot listen on %s: another process holds UDP port %d: %s; sharing it would give that process a share of the datagrams, so stop it or choose another address", ap, ap.Port(), strings.Join(foreign, ", "))
		}
	}
	return nil
}

// foreignSockets lists the sockets of table (a /proc/net/udp{,6} file) on
// ap's port that are not in own, each as "address (inode N[, pid P])".
func foreignSockets(table string, ap netip.AddrPort, own map[uint64]bool) ([]string, error) {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return nil, nil // no IPv6 in this kernel
	}
	if err != nil {
		return nil, fmt.Errorf("cannot check that UDP port %d is ours alone: %w", ap.Port(), err)
	}
	defer f.Close()
	var foreign []string
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		local, ok := parseProcAddr(fields[1])
		if !ok || local.Port() != ap.Port() || !overlaps(local.Addr(), ap.Addr()) {
			continue
		}
		ino, err := strconv.ParseUint(fields[9], 10, 64)
		if err != nil || own[ino] {
			continue
		}
		foreign = append(foreign, fmt.Sprintf("%s (socket inode %d%s)", local, ino, ownerOf(ino)))
	}
	return foreign, sc.Err()
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
