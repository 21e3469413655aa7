//go:build linux

package netio

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/netio/stun"
	"golang.org/x/sys/unix"
)

// reusePortOn binds a SO_REUSEPORT UDP socket of network on addr.
func reusePortOn(t *testing.T, network, addr string) *net.UDPConn {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(context.Background(), network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	return pc.(*net.UDPConn)
}

// drain counts, per socket, the datagrams it reads until quiet for 300 ms,
// by payload (each payload names its flow).
func drain(t *testing.T, socks []*net.UDPConn) []map[string]int {
	t.Helper()
	got := make([]map[string]int, len(socks))
	var wg sync.WaitGroup
	for i, s := range socks {
		got[i] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			for {
				_ = s.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				n, err := s.Read(buf)
				if err != nil {
					return
				}
				got[i][string(buf[:n])]++
			}
		}()
	}
	wg.Wait()
	return got
}

// TestSteeringKeepsFlowsOnOwnSockets: after the program is attached to a
// group of 4 sockets, a fifth socket of the same user joining the group
// gets no datagram, while flows spread over all 4 and each flow keeps its
// socket (the kernel's behaviour without a program). IPv4, IPv6, and IPv4
// datagrams to a dual-stack group.
func TestSteeringKeepsFlowsOnOwnSockets(t *testing.T) {
	cases := []struct{ name, network, bind, from, to string }{
		{"ipv4", "udp4", "127.0.0.1:0", "udp4", "127.0.0.1"},
		{"ipv6", "udp6", "[::1]:0", "udp6", "::1"},
		{"dualstack", "udp", "[::]:0", "udp4", "127.0.0.1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.network != "udp4" && !ipv6Loopback() {
				t.Skip("no IPv6 loopback")
			}
			const own = 4
			socks := []*net.UDPConn{reusePortOn(t, tc.network, tc.bind)}
			port := uint16(socks[0].LocalAddr().(*net.UDPAddr).Port)
			addr := netip.AddrPortFrom(netip.MustParseAddr(tc.to), port).String()
			same := netip.AddrPortFrom(netip.MustParseAddrPort(tc.bind).Addr(), port).String()
			for len(socks) < own {
				socks = append(socks, reusePortOn(t, tc.network, same))
			}
			rc, err := socks[0].SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			if err := attachSteering(rc, own, newSteerKeys()); err != nil {
				t.Fatal(err)
			}
			socks = append(socks, reusePortOn(t, tc.network, same)) // joins later: index own

			const flows, perFlow = 64, 3
			for f := 0; f < flows; f++ {
				c, err := net.Dial(tc.from, addr)
				if err != nil {
					t.Fatal(err)
				}
				for range perFlow {
					if _, err := c.Write([]byte("flow" + strconv.Itoa(f))); err != nil {
						t.Fatal(err)
					}
				}
				_ = c.Close()
			}
			got := drain(t, socks)
			if n := len(got[own]); n != 0 {
				t.Errorf("the socket that joined later got %d flows' datagrams", n)
			}
			seen := map[string]int{}
			for i := range own {
				if len(got[i]) == 0 {
					t.Errorf("own socket %d got no flow of %d: the flows are not spread", i, flows)
				}
				for flow, n := range got[i] {
					if n != perFlow {
						t.Errorf("flow %s: %d of its %d datagrams on socket %d: a flow must keep its socket", flow, n, perFlow, i)
					}
					seen[flow]++
				}
			}
			if len(seen) != flows {
				t.Errorf("%d of %d flows arrived", len(seen), flows)
			}
		})
	}
}

// answeredBindings sends each plain Binding requests from each of sources
// source ports to addr and returns how many were answered.
func answeredBindings(t *testing.T, addr netip.AddrPort, sources, each int) int {
	t.Helper()
	var wg sync.WaitGroup
	answered := make([]int, sources)
	for s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(addr))
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			want := map[[12]byte]bool{}
			for range each {
				req := plainBinding(t)
				want[txOf(req)] = true
				if _, err := c.Write(req); err != nil {
					t.Error(err)
					return
				}
			}
			buf := make([]byte, 1500)
			_ = c.SetReadDeadline(time.Now().Add(waitBound))
			for len(want) > 0 {
				n, err := c.Read(buf)
				if err != nil {
					return // the caller counts what is missing
				}
				var msg stun.Message
				if stun.Parse(append([]byte(nil), buf[:n]...), &msg) == nil && want[msg.TransactionID()] {
					delete(want, msg.TransactionID())
					answered[s]++
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range answered {
		total += n
	}
	return total
}

// countReads counts what c reads until its read deadline, which the caller
// sets when done, then sends the count.
func countReads(c *net.UDPConn) <-chan int {
	out := make(chan int, 1)
	go func() {
		n := 0
		buf := make([]byte, 1500)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				out <- n
				return
			}
			n++
		}
	}()
	return out
}

// startWatchedMediator starts a mediator of 4 sockets on 127.0.0.1 that
// checks its port every 20 ms, logging to logs and counting into set.
func startWatchedMediator(t *testing.T, set *metrics.Set, logs *e2e.LockedBuffer) *Mediator {
	t.Helper()
	keys := engine.NewKeyring(testKey)
	st, err := memstore.New(engine.DefaultLimits(), engine.NewManualClock(), keys)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 4, Metrics: set,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}, st, keys)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	m.foreignEvery = 20 * time.Millisecond
	m.Start()
	return m
}

// waitGauge waits until the foreign sockets gauge of set reads want.
func waitGauge(t *testing.T, set *metrics.Set, want float64) {
	t.Helper()
	g := set.GetOrCreateGauge(metricForeign, nil)
	for deadline := time.Now().Add(waitBound); g.Get() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %v, want %v", metricForeign, g.Get(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stolenFrom sends each plain Binding request from each of sources source
// ports to the mediator at addr, which must answer them all, and returns
// how many datagrams the foreign socket read meanwhile.
func stolenFrom(t *testing.T, foreign *net.UDPConn, addr netip.AddrPort, sources, each int) int {
	t.Helper()
	stolen := countReads(foreign)
	if n := answeredBindings(t, addr, sources, each); n != sources*each {
		t.Errorf("the mediator answered %d of %d requests", n, sources*each)
	}
	_ = foreign.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	return <-stolen
}

// TestForeignSocketGetsNoDatagrams: a socket of the same user that joins
// the started mediator's SO_REUSEPORT group gets none of the 500 Binding
// requests sent from 50 source ports, all of which the mediator answers;
// the gauge and one log line report it, and its leaving once more.
func TestForeignSocketGetsNoDatagrams(t *testing.T) {
	set := metrics.NewSet()
	var logs e2e.LockedBuffer
	m := startWatchedMediator(t, set, &logs)
	addr := m.LocalAddrs()[0]

	foreign := reusePortSocket(t, addr.String())
	waitGauge(t, set, 1)

	const sources, each = 50, 10
	if n := stolenFrom(t, foreign, addr, sources, each); n != 0 {
		t.Errorf("the foreign socket received %d of %d datagrams", n, sources*each)
	}

	out := logs.String()
	if c := strings.Count(out, "another process has bound a socket on the mediator's UDP port"); c != 1 {
		t.Errorf("the foreign socket was logged %d times, want once:\n%s", c, out)
	}
	if !strings.Contains(out, "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("the log does not name the process holding the socket:\n%s", out)
	}

	_ = foreign.Close()
	waitGauge(t, set, 0)
	if !strings.Contains(logs.String(), "no other process's socket is left") {
		t.Errorf("the foreign socket's leaving was not logged:\n%s", logs.String())
	}
}

// TestForeignProgramIsReplaced: any member of a group may attach its own
// program; one that steers everything to the foreign socket (index 4, the
// mediator's 4 sockets being 0..3) is replaced at the next check, and the
// foreign socket gets none of the datagrams sent after it.
func TestForeignProgramIsReplaced(t *testing.T) {
	set := metrics.NewSet()
	m := startWatchedMediator(t, set, &e2e.LockedBuffer{})
	addr := m.LocalAddrs()[0]
	foreign := reusePortSocket(t, addr.String())
	waitGauge(t, set, 1)

	rc, err := foreign.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	toMe := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: 4}}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_CBPF,
			&unix.SockFprog{Len: 1, Filter: &toMe[0]})
	}); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	time.Sleep(200 * time.Millisecond) // several checks

	const sources, each = 20, 5
	if n := stolenFrom(t, foreign, addr, sources, each); n != 0 {
		t.Errorf("the foreign socket's own program still steered %d of %d datagrams to it", n, sources*each)
	}
}
