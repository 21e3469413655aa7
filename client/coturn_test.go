package client

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// coturn is one Debian coturn turnserver started by a test with
// use-auth-secret (coturn's TURN REST API credentials), stopped at cleanup.
type coturn struct {
	addr   netip.AddrPort // its TURN/STUN listener
	secret string
	log    e2e.LockedBuffer
	cmd    *exec.Cmd
	exited chan struct{}
}

// requireCoturn returns the turnserver binary. Outside CI a machine without
// coturn skips the relay tests; CI (CI=true, which installs coturn through
// .ci/run) must run them, so there it fails instead.
func requireCoturn(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("turnserver")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("turnserver not installed: CI must run the relay tests (apt-get install coturn; .ci/run does)")
		}
		t.Skip("turnserver not installed (Debian package coturn; .ci/run installs it)")
	}
	return bin
}

// startCoturn runs turnserver (with prefix, e.g. ip netns exec NS) listening
// and relaying on ip:port, accepting credentials made with secret, until
// the test ends; its log is shown if the test fails.
func startCoturn(t *testing.T, prefix []string, ip netip.Addr, port uint16, secret string) *coturn {
	t.Helper()
	bin := requireCoturn(t)
	c, err := launchCoturn(bin, prefix, ip, port, secret, t.TempDir())
	if c != nil {
		t.Cleanup(func() {
			c.stop()
			if t.Failed() {
				t.Logf("turnserver log:\n%s", c.log.String())
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// launchCoturn is startCoturn without a test (dir holds its pid file and
// database): it returns once coturn says its listeners are open. On error
// a started process is returned too, for the caller to stop.
func launchCoturn(bin string, prefix []string, ip netip.Addr, port uint16, secret, dir string) (*coturn, error) {
	c := &coturn{addr: netip.AddrPortFrom(ip, port), secret: secret, exited: make(chan struct{})}
	args := []string{bin, "-n", "--log-file=stdout", "--simple-log", "--no-tls", "--no-dtls", "--no-cli",
		"--listening-ip=" + ip.String(), "--listening-port=" + strconv.Itoa(int(port)), "--relay-ip=" + ip.String(),
		"--min-port=50000", "--max-port=50999", "--realm=rendezvous.test",
		"--use-auth-secret", "--static-auth-secret=" + secret, // not logged by coturn
		"--pidfile=" + filepath.Join(dir, "turnserver.pid"), "--db=" + filepath.Join(dir, "turndb"),
		"--no-software-attribute"}
	if ip.IsLoopback() {
		args = append(args, "--allow-loopback-peers")
	}
	argv := append(append([]string{}, prefix...), args...)
	c.cmd = exec.Command(argv[0], argv[1:]...)
	c.cmd.Stdout, c.cmd.Stderr = &c.log, &c.log
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start turnserver: %v", err)
	}
	go func() { c.cmd.Wait(); close(c.exited) }() // the status is of no interest: it is stopped
	// coturn logs this once every listener is open; on loopback, a STUN
	// Binding answered proves the UDP listener too.
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(c.log.String(), "Total General servers") || (len(prefix) == 0 && !stunAnswers(c.addr)) {
		select {
		case <-c.exited:
			return c, fmt.Errorf("turnserver exited:\n%s", c.log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("turnserver never opened its listeners on %v:\n%s", c.addr, c.log.String())
		}
	}
	return c, nil
}

// stunAnswers reports whether a STUN Binding to addr is answered within
// 100 ms.
func stunAnswers(addr netip.AddrPort) bool {
	conn, err := net.ListenUDP("udp", nil)
	if err != nil {
		return false
	}
	defer conn.Close()
	var buf [64]byte
	b := stun.NewBuilder(buf[:0], stun.BindingRequest, newTxID())
	b.AddFingerprint()
	if _, err := conn.WriteToUDPAddrPort(b.Bytes(), addr); err != nil {
		return false
	}
	conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	_, _, err = conn.ReadFromUDPAddrPort(buf[:])
	return err == nil
}

// stop ends coturn: SIGTERM, then SIGKILL if it lingers.
func (c *coturn) stop() {
	c.cmd.Process.Signal(syscall.SIGTERM) // an error means it already exited
	select {
	case <-c.exited:
	case <-time.After(hangGuard):
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// turnCredential makes coturn's TURN REST API credential for id, expiring
// at expiry, with secret (what the server hands out in a relay object).
func turnCredential(secret, id string, expiry time.Time) (username, credential string) {
	username = fmt.Sprintf("%d:%s", expiry.Unix(), id)
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// relayFor is the relay object a server with secret would grant for id.
func (c *coturn) relayFor(secret, id string, expiry time.Time) *Relay {
	u, cred := turnCredential(secret, id, expiry)
	return &Relay{URLs: []string{"turn:" + c.addr.String() + "?transport=udp"}, Username: u, Credential: RelayCredential(cred), TTL: time.Until(expiry)}
}

// freeUDPPort returns a loopback UDP port that was free a moment ago.
func freeUDPPort(t *testing.T) uint16 {
	t.Helper()
	p, err := freeLoopbackUDPPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// freeLoopbackUDPPort picks a port below the kernel's ephemeral range
// (32768 and up on Linux) that is free for UDP and TCP (coturn listens on
// both), so no socket the kernel numbers itself takes it before coturn does.
func freeLoopbackUDPPort() (uint16, error) {
	for range 100 {
		p := uint16(20000 + mrand.IntN(10000))
		u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(p)})
		if err != nil {
			continue
		}
		l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: int(p)})
		u.Close()
		if err != nil {
			continue
		}
		l.Close()
		return p, nil
	}
	return 0, fmt.Errorf("no free loopback port in 20000..29999")
}
