//go:build linux

package deploy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pion/logging"
	"github.com/pion/turn/v5"
	"golang.org/x/sys/unix"

	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/turncred"
)

// TestCoturnRefusesInternalPeers starts Debian's coturn with
// deploy/coturn/turnserver.conf through deploy/coturn/turnserver-start (the
// secret from a file, as coturn-rendezvous.service runs it), changing only
// its addresses and ports, in network namespaces of its own:
//
//	inet (203.0.113.2: the TURN client and an internet peer)
//	  └── relay (203.0.113.1: coturn; a peer on its loopback)
//	        └── lan (10.77.0.2, 169.254.77.2: a private and a link-local peer)
//
// A credential Rendezvous issues (internal/turncred) gets an allocation;
// through it a datagram reaches the internet peer, while the private, the
// link-local and the loopback peer get none (coturn answers the
// permission request 403).
func TestCoturnRefusesInternalPeers(t *testing.T) {
	requireLab(t)
	conf, err := os.ReadFile(filepath.Join("coturn", "turnserver.conf"))
	if err != nil {
		t.Fatal(err)
	}
	l := newCoturnLab(t)
	l.link("inet", "veth-r", "203.0.113.2/24", "relay", "veth-i", "203.0.113.1/24")
	l.link("relay", "veth-l", "10.77.0.1/24", "lan", "veth-r", "10.77.0.2/24")
	l.in("relay", "ip", "addr", "add", "169.254.77.1/16", "dev", "veth-l")
	l.in("lan", "ip", "addr", "add", "169.254.77.2/16", "dev", "veth-r")
	l.in("lan", "ip", "route", "add", "default", "via", "10.77.0.1")
	l.in("inet", "ip", "route", "add", "default", "via", "203.0.113.1")
	l.in("relay", "sysctl", "-q", "-w", "net.ipv4.ip_forward=1")

	// Only addresses and ports change; every other line is the shipped one.
	dir := t.TempDir()
	tmpl := string(conf)
	for key, v := range map[string]string{"listening-ip": "203.0.113.1", "relay-ip": "203.0.113.1",
		"listening-port": "3478", "min-port": "49152", "max-port": "49252"} {
		re := regexp.MustCompile(`(?m)^` + key + `=.*$`)
		if !re.MatchString(tmpl) {
			t.Fatalf("turnserver.conf has no %s line", key)
		}
		tmpl = re.ReplaceAllString(tmpl, key+"="+v)
	}
	confPath, secretPath := filepath.Join(dir, "turnserver.conf"), filepath.Join(dir, "turn.secret")
	const secret = "coturn-deploy-test-secret"
	if err := os.WriteFile(confPath, []byte(tmpl), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretPath, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.ns("relay"), "sh", filepath.Join("coturn", "turnserver-start"),
		confPath, secretPath, "--pidfile="+filepath.Join(dir, "turnserver.pid"), "--db="+filepath.Join(dir, "turndb"),
		"--log-file=stdout", "--simple-log")
	runDir := t.TempDir() // systemd's RuntimeDirectory in the unit
	cmd.Env = append(os.Environ(), "RUNTIME_DIRECTORY="+runDir)
	var log e2e.LockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	if strings.Contains(strings.Join(cmd.Args, " "), secret) {
		t.Fatal("the secret is on coturn's command line")
	}

	// The peers: each counts what it receives.
	type peer struct {
		name string
		conn net.PacketConn
		addr netip.AddrPort
	}
	var peers []peer
	for _, p := range []struct{ name, ns, addr string }{
		{"internet", "inet", "203.0.113.2:40000"},
		{"private", "lan", "10.77.0.2:40000"},
		{"link-local", "lan", "169.254.77.2:40001"},
		{"loopback", "relay", "127.0.0.1:40000"},
	} {
		var c net.PacketConn
		l.inNetns(p.ns, func() { c, err = net.ListenPacket("udp4", p.addr) })
		if err != nil {
			t.Fatalf("%s peer: %v", p.name, err)
		}
		t.Cleanup(func() { c.Close() })
		peers = append(peers, peer{p.name, c, netip.MustParseAddrPort(p.addr)})
	}

	// The TURN client, in the internet namespace, with an issued credential.
	iss, err := turncred.New([]string{"turn:203.0.113.1:3478?transport=udp"}, []byte(secret), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	cred := iss.Issue(time.Now(), "0b5e1f3c-7d2a-4c11-9e57-3f0a8d6b2c41", turncred.SideClient)
	var conn net.PacketConn
	l.inNetns("inet", func() { conn, err = net.ListenPacket("udp4", "203.0.113.2:0") })
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var c *turn.Client
	var relay net.PacketConn
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err = turn.NewClient(&turn.ClientConfig{
			TURNServerAddr: "203.0.113.1:3478", Username: cred.Username, Password: cred.Credential,
			Conn: conn, RTO: 200 * time.Millisecond,
			LoggerFactory: &logging.DefaultLoggerFactory{Writer: io.Discard, DefaultLogLevel: logging.LogLevelDisabled},
		})
		if err == nil {
			if err = c.Listen(); err == nil {
				actx, acancel := context.WithTimeout(context.Background(), 2*time.Second)
				relay, err = c.AllocateWithContext(actx)
				acancel()
			}
		}
		if err == nil {
			break
		}
		if c != nil {
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("no allocation with an issued credential: %v\ncoturn:\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	defer c.Close()
	defer relay.Close()

	for _, p := range peers {
		done := make(chan error, 1)
		go func() {
			_, err := relay.WriteTo([]byte("hello "+p.name), net.UDPAddrFromAddrPort(p.addr))
			done <- err
		}()
		var werr error
		select {
		case werr = <-done:
		case <-time.After(5 * time.Second):
			werr = errors.New("no answer to the permission request")
		}
		got := receive(p.conn, time.Second)
		if p.name == "internet" {
			if werr != nil || got != 1 {
				t.Fatalf("internet peer: send error %v, %d datagrams received; want it reached", werr, got)
			}
			continue
		}
		if got != 0 {
			t.Fatalf("%s peer %v received %d datagrams through the relay\ncoturn:\n%s", p.name, p.addr, got, log.String())
		}
		if werr == nil {
			t.Fatalf("%s peer %v: the relay granted the permission", p.name, p.addr)
		}
		t.Logf("%s peer %v: refused: %v", p.name, p.addr, werr)
	}
}

// receive counts the datagrams conn gets within d.
func receive(conn net.PacketConn, d time.Duration) int {
	n := 0
	buf := make([]byte, 1500)
	_ = conn.SetReadDeadline(time.Now().Add(d))
	for {
		if _, _, err := conn.ReadFrom(buf); err != nil {
			return n
		}
		n++
	}
}

// requireOrSkip skips the test, or fails it in CI (CI or RDV_REQUIRE_REDIS
// set), which installs everything it needs.
func requireOrSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" || os.Getenv("RDV_REQUIRE_REDIS") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// requireLab checks for root, ip and coturn.
func requireLab(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		requireOrSkip(t, "the coturn lab needs root (it creates network namespaces); CI runs it as root")
	}
	for _, tool := range []string{"ip", "turnserver", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			requireOrSkip(t, "the coturn lab needs %s (Debian packages iproute2, coturn)", tool)
		}
	}
}

// coturnLab is a set of network namespaces, deleted at cleanup.
type coturnLab struct {
	t      *testing.T
	prefix string
}

func newCoturnLab(t *testing.T) *coturnLab {
	l := &coturnLab{t: t, prefix: fmt.Sprintf("rdvturn%d-", os.Getpid()%100000)}
	for _, n := range []string{"inet", "relay", "lan"} {
		l.sh("ip", "netns", "add", l.ns(n))
		t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", l.ns(n)).Run() })
		l.in(n, "ip", "link", "set", "lo", "up")
	}
	return l
}

func (l *coturnLab) ns(name string) string { return l.prefix + name }

func (l *coturnLab) sh(args ...string) {
	l.t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (l *coturnLab) in(ns string, args ...string) {
	l.t.Helper()
	l.sh(append([]string{"ip", "netns", "exec", l.ns(ns)}, args...)...)
}

// link joins namespaces a and b with a veth pair (ifa in a, ifb in b).
func (l *coturnLab) link(a, ifa, addrA, b, ifb, addrB string) {
	l.t.Helper()
	l.sh("ip", "link", "add", "name", ifa, "netns", l.ns(a), "type", "veth", "peer", "name", ifb, "netns", l.ns(b))
	l.in(a, "ip", "addr", "add", addrA, "dev", ifa)
	l.in(b, "ip", "addr", "add", addrB, "dev", ifb)
	l.in(a, "ip", "link", "set", "dev", ifa, "up")
	l.in(b, "ip", "link", "set", "dev", ifb, "up")
}

// inNetns runs f on a thread inside namespace ns: a socket it opens stays
// in that namespace. The thread returns to its own namespace after f; if
// it cannot, it stays locked and dies with the goroutine.
func (l *coturnLab) inNetns(ns string, f func()) {
	l.t.Helper()
	runtime.LockOSThread()
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		l.t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + l.ns(ns))
	if err != nil {
		runtime.UnlockOSThread()
		l.t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		l.t.Fatalf("setns %s: %v", ns, err)
	}
	f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		l.t.Fatalf("back from %s: %v", ns, err) // the thread stays locked and exits
	}
	runtime.UnlockOSThread()
}
