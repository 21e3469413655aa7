//go:build linux

package client

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestNATHolePunchTwoInstances is the endpoint-independent case of
// TestNATHolePunch with two instances on one Redis in the "internet": A on
// 10.99.0.1, B on 10.99.0.2. The host publishes through B, so its presence
// (and the only mapping its NAT keeps toward the service) goes to B; the
// joiner's HTTP goes to A, which creates the attempt and names itself as
// the attempt's mediator. The OFFER must leave from B (A forwards it
// through Redis), and the INTRODUCE to the joiner, whose bind reached A,
// from A: the host's NAT receives nothing from A and the joiner's nothing
// from B, and the two peers punch through and chat directly.
func TestNATHolePunchTwoInstances(t *testing.T) {
	requireNetns(t)
	redistest.SkipIfMissing(t)
	l := newLab(t, false)
	l.in("pub", "ip", "addr", "add", "10.99.0.2/32", "dev", "lo")
	// Datagrams each instance sends toward each NAT (in pub's output hook:
	// the servers run there), added to newLab's counter table.
	l.nft("pub", `table ip rdvcount {
	counter a_to_host {}
	counter b_to_host {}
	counter a_to_joiner {}
	counter b_to_joiner {}
	counter to_b_nonstun {}
	chain out {
		type filter hook output priority 0; policy accept;
		ip saddr 10.99.0.1 ip daddr 10.99.1.2 udp sport 3478 counter name a_to_host
		ip saddr 10.99.0.2 ip daddr 10.99.1.2 udp sport 3478 counter name b_to_host
		ip saddr 10.99.0.1 ip daddr 10.99.2.2 udp sport 3478 counter name a_to_joiner
		ip saddr 10.99.0.2 ip daddr 10.99.2.2 udp sport 3478 counter name b_to_joiner
	}
	chain b_in {
		type filter hook input priority 0; policy accept;
		ip daddr 10.99.0.2 udp dport 3478 @th,96,32 != 0x2112a442 counter name to_b_nonstun
	}
}
`)
	redisAddr := l.startRedis("pub")
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	shared := []string{"--store", "redis", "--redis-addr", redisAddr, "--redis-name", "nat", "--capability-key-file", key}
	a := startServer(t, l.exec("pub"), append([]string{"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478"}, shared...)...)
	b := startServer(t, l.exec("pub"), append([]string{"--http-addr", "10.99.0.2:8080", "--udp-addr", "10.99.0.2:3478"}, shared...)...)

	host := startPeer(t, l.exec("host"), b.tokens["publisher"], "host", "--server", "http://10.99.0.2:8080", "--name", "two instances", "--echo")
	id := host.waitLine(t, publishedRe)
	join := startPeer(t, l.exec("join"), a.tokens["client"], "join", "--server", "http://10.99.0.1:8080", "--listing", id,
		"--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "3s")
	code := join.wait(t)
	out, errOut := join.stdout.String(), join.stderr.String()
	if code != 0 {
		t.Fatalf("the joiner exited %d:\n%s\n%s\nhost:\n%s", code, out, errOut, host.stdout.String())
	}
	for _, want := range []string{"introduced to host: public 10.99.1.2:", "punched: direct path to 10.99.1.2:", "host says: echo: world"} {
		if !strings.Contains(out, want) {
			t.Fatalf("joiner output lacks %q:\n%s", want, out)
		}
	}
	host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.2\.2:\d+ says: world$`))
	if n := l.counter("direct_1to2") + l.counter("direct_2to1"); n == 0 {
		t.Fatal("no direct traffic forwarded between the NATs")
	}
	for name, want := range map[string]bool{"a_to_host": false, "b_to_host": true, "a_to_joiner": true, "b_to_joiner": false} {
		if n := l.counter(name); (n > 0) != want {
			t.Errorf("%s = %d datagrams, want any: %v (the host reached only B, the joiner only A)", name, n, want)
		}
	}
	if n := l.counter("to_server_nonstun") + l.counter("to_b_nonstun"); n != 0 {
		t.Fatalf("the servers received %d non-STUN datagrams: peer traffic went through them", n)
	}
	for _, s := range []*testServer{a, b} {
		if strings.Contains(s.stderr.String(), `"level":"ERROR"`) {
			t.Fatalf("a server logged an error:\n%s", s.stderr.String())
		}
	}
}

// startRedis runs redis-server inside namespace ns on its own loopback
// (127.0.0.1:6379, free in a new namespace) and waits, at most hangGuard,
// until it answers PING there. It is killed at cleanup.
func (l *lab) startRedis(ns string) string {
	l.t.Helper()
	const addr = "127.0.0.1:6379"
	cmd := exec.Command("ip", "netns", "exec", l.ns(ns), "redis-server", "--port", "6379", "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("cannot start redis-server in %s: %v", ns, err)
	}
	l.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(hangGuard)
	for {
		out, _ := exec.Command("ip", "netns", "exec", l.ns(ns), "redis-cli", "-h", "127.0.0.1", "-p", "6379", "ping").Output()
		if strings.TrimSpace(string(out)) == "PONG" {
			return addr
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("redis-server in %s did not answer PING within %v", ns, hangGuard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
