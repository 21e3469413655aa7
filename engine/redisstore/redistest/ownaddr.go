package redistest

import (
	"fmt"
	"net"
	"os"
	"sync/atomic"
)

// ownAddrs counts the loopback addresses handed out by this process.
var ownAddrs atomic.Uint32

// ownAddr is a loopback address no other process of the machine's tests
// uses: 127.a.b.c with a.b from the process ID (never 127.0.0.x) and c
// counting up, so parallel test binaries cut off only their own processes.
func ownAddr() string {
	pid := os.Getpid()
	n := ownAddrs.Add(1)
	return fmt.Sprintf("127.%d.%d.%d", 1+(pid>>8)%250, pid&0xff, 1+n%254)
}

// ownAddrSettings are the settings of a node or sentinel on its own
// loopback address host: it connects from host (so rules on addresses see
// who talks to whom), and it takes connections from the other loopback
// addresses (protected mode counts only 127.0.0.1 and ::1 as local).
func ownAddrSettings(host string) []string {
	return []string{"bind-source-addr " + host, "protected-mode no"}
}

// Host is the address the server listens and connects on, without port.
func (s *Server) Host() string {
	h, _, _ := net.SplitHostPort(s.Addr)
	return h
}
