//go:build linux

package client

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNATHolePunch builds a small internet in network namespaces:
//
//	  host ns (192.168.1.2) ── nat1 (192.168.1.1 | 10.99.1.2) ──┐
//	                                                            pub (10.99.1.1, 10.99.2.1; server on 10.99.0.1)
//	joiner ns (192.168.2.2) ── nat2 (192.168.2.1 | 10.99.2.2) ──┘
//
// nat1 and nat2 do source NAT with nftables masquerade and, like home
// routers, drop unsolicited inbound datagrams on their WAN side (without that
// drop, Linux confirms a conntrack entry for the peer's early probe and the
// router's own later mapping clashes with it and moves to another port:
// see docs/adr/0004-hole-punching.md). The server runs in
// pub, the rendezvous-peer host and joiner in their private namespaces. With
// port-preserving masquerade (endpoint-independent mapping) the two peers
// must punch through and chat directly, and the server must see none of that
// traffic (an nftables counter in pub counts every non-STUN datagram
// addressed to the server; another counts what pub forwards between the two
// NATs). With fully-random masquerade on the joiner's side (a new port per
// destination: a symmetric NAT) the punch must fail with the typed error
// (exit status 3, "hole punch failed") within its timeout, not hang.
func TestNATHolePunch(t *testing.T) {
	requireNetns(t)
	t.Run("endpoint-independent", func(t *testing.T) { natCase(t, false) })
	t.Run("symmetric", func(t *testing.T) { natCase(t, true) })
}

// requireNetns skips the NAT tests where they cannot run, except in CI
// (CI=true), which installs what they need and must never skip them.
func requireNetns(t *testing.T) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("the NAT hole-punch test needs root (it creates network namespaces); CI runs it as root")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip("the NAT hole-punch test needs %s (apt-get install iproute2 nftables; .ci/run does)", tool)
		}
	}
	probe := fmt.Sprintf("rdvprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		skip("root, but cannot create a network namespace (a container without CAP_SYS_ADMIN and CAP_NET_ADMIN?): %v: %s", err, out)
	}
	if out, err := exec.Command("ip", "netns", "del", probe).CombinedOutput(); err != nil {
		t.Fatalf("cannot delete the probe namespace %s: %v: %s", probe, err, out)
	}
}

// lab is one set of namespaces, deleted at cleanup even when the test fails.
type lab struct {
	t      *testing.T
	prefix string
}

func (l *lab) ns(name string) string { return l.prefix + name }

func (l *lab) sh(args ...string) string {
	l.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// in runs a command inside namespace ns.
func (l *lab) in(ns string, args ...string) string {
	l.t.Helper()
	return l.sh(append([]string{"ip", "netns", "exec", l.ns(ns)}, args...)...)
}

// exec is the command prefix that runs a program inside namespace ns.
func (l *lab) exec(ns string) []string { return []string{"ip", "netns", "exec", l.ns(ns)} }

// nft loads a ruleset into namespace ns.
func (l *lab) nft(ns, rules string) {
	l.t.Helper()
	cmd := exec.Command("ip", "netns", "exec", l.ns(ns), "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("nft in %s: %v\n%s\n%s", ns, err, out, rules)
	}
}

// link connects namespaces a and b with a veth pair and addresses.
func (l *lab) link(a, ifa, addrA, b, ifb, addrB string) {
	l.t.Helper()
	l.sh("ip", "link", "add", "name", ifa, "netns", l.ns(a), "type", "veth", "peer", "name", ifb, "netns", l.ns(b))
	l.in(a, "ip", "addr", "add", addrA, "dev", ifa)
	l.in(b, "ip", "addr", "add", addrB, "dev", ifb)
	l.in(a, "ip", "link", "set", "dev", ifa, "up")
	l.in(b, "ip", "link", "set", "dev", ifb, "up")
}

// newLab builds the namespaces; tag tells labs of one run apart, random1
// and random2 make nat1 / nat2 fully-random (symmetric). pub also carries
// 10.99.0.2, where the relay tests run coturn.
func newLab(t *testing.T, tag byte, random1, random2 bool) *lab {
	t.Helper()
	l := &lab{t: t, prefix: fmt.Sprintf("rdv%d%c-", os.Getpid()%100000, tag)}
	names := []string{"pub", "nat1", "nat2", "host", "join"}
	t.Cleanup(func() {
		for _, n := range names {
			// Deleting a namespace that was never made fails harmlessly.
			exec.Command("ip", "netns", "del", l.ns(n)).Run()
		}
	})
	for _, n := range names {
		l.sh("ip", "netns", "add", l.ns(n))
		l.in(n, "ip", "link", "set", "lo", "up")
	}
	// The "internet": pub routes between the two NATs and hosts the server.
	l.link("pub", "p1", "10.99.1.1/24", "nat1", "wan0", "10.99.1.2/24")
	l.link("pub", "p2", "10.99.2.1/24", "nat2", "wan0", "10.99.2.2/24")
	l.in("pub", "ip", "addr", "add", "10.99.0.1/32", "dev", "lo")
	l.in("pub", "ip", "addr", "add", "10.99.0.2/32", "dev", "lo")
	l.in("pub", "sysctl", "-qw", "net.ipv4.ip_forward=1")
	// The LANs.
	l.link("nat1", "lan0", "192.168.1.1/24", "host", "eth0", "192.168.1.2/24")
	l.link("nat2", "lan0", "192.168.2.1/24", "join", "eth0", "192.168.2.2/24")
	l.in("host", "ip", "route", "add", "default", "via", "192.168.1.1")
	l.in("join", "ip", "route", "add", "default", "via", "192.168.2.1")
	for i, n := range []string{"nat1", "nat2"} {
		l.in(n, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		l.in(n, "ip", "route", "add", "default", "via", fmt.Sprintf("10.99.%d.1", i+1))
		mode := "masquerade" // port-preserving when it can: endpoint-independent mapping
		if (random1 && n == "nat1") || (random2 && n == "nat2") {
			mode = "masquerade fully-random" // a new random port per destination
		}
		l.nft(n, `table ip nat {
	chain masq {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "wan0" `+mode+`
	}
}
table ip filter {
	chain wan_in {
		type filter hook input priority filter; policy accept;
		iifname "wan0" ct state new drop
	}
}
`)
	}
	// Counters in pub: non-STUN datagrams addressed to the server (must stay
	// 0), UDP forwarded directly between the NATs (the punched path), UDP
	// addressed to the relay, and the INTRODUCE (0x02F2) and RELAY-INTRODUCE
	// (0x02F3) indications the server sent.
	l.nft("pub", `table ip rdvcount {
	counter to_server_nonstun {}
	counter direct_1to2 {}
	counter direct_2to1 {}
	counter to_relay {}
	counter introduce_sent {}
	counter relay_introduce_sent {}
	chain server_in {
		type filter hook input priority 0; policy accept;
		ip daddr 10.99.0.1 udp dport 3478 @th,96,32 != 0x2112a442 counter name to_server_nonstun
		ip daddr 10.99.0.2 meta l4proto udp counter name to_relay
	}
	chain server_out {
		type filter hook output priority 0; policy accept;
		ip saddr 10.99.0.1 udp sport 3478 @th,64,16 0x02f2 counter name introduce_sent
		ip saddr 10.99.0.1 udp sport 3478 @th,64,16 0x02f3 counter name relay_introduce_sent
	}
	chain transit {
		type filter hook forward priority 0; policy accept;
		ip saddr 10.99.1.2 ip daddr 10.99.2.2 meta l4proto udp counter name direct_1to2
		ip saddr 10.99.2.2 ip daddr 10.99.1.2 meta l4proto udp counter name direct_2to1
	}
}
`)
	return l
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var packetsRe = regexp.MustCompile(`packets (\d+)`)

func (l *lab) counter(name string) int {
	l.t.Helper()
	out := l.in("pub", "nft", "list", "counter", "ip", "rdvcount", name)
	m := packetsRe.FindStringSubmatch(out)
	if m == nil {
		l.t.Fatalf("cannot read counter %s:\n%s", name, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func natCase(t *testing.T, symmetric bool) {
	l := newLab(t, "es"[b2i(symmetric)], false, symmetric)
	srv := startServer(t, []string{"ip", "netns", "exec", l.ns("pub")},
		"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478")
	server := "http://10.99.0.1:8080"
	host := startPeer(t, l.exec("host"), srv.tokens["publisher"], "host", "--server", server, "--name", "nat test", "--echo")
	id := host.waitLine(t, publishedRe)
	join := startPeer(t, l.exec("join"), srv.tokens["client"], "join", "--server", server, "--listing", id,
		"--say", "hello", "--say", "world", "--replies", "2", "--punch-timeout", "3s")
	code := join.wait(t)
	out, errOut := join.stdout.String(), join.stderr.String()
	if !strings.Contains(out, "introduced to host: public 10.99.1.2:") {
		t.Fatalf("the joiner was not introduced to the host's NAT endpoint:\n%s\n%s", out, errOut)
	}
	if symmetric {
		if code != 3 || !strings.Contains(errOut, "hole punch failed") {
			t.Fatalf("behind a symmetric NAT the joiner exited %d, want 3 with \"hole punch failed\":\n%s\n%s", code, out, errOut)
		}
		// The host's side of the punch ends with the same typed error.
		host.waitLine(t, regexp.MustCompile(`^punch to joiner failed: rendezvous: hole punch failed`))
	} else {
		if code != 0 {
			t.Fatalf("the joiner exited %d:\n%s\n%s", code, out, errOut)
		}
		for _, want := range []string{"punched: direct path to 10.99.1.2:", "host says: echo: hello", "host says: echo: world"} {
			if !strings.Contains(out, want) {
				t.Fatalf("joiner output lacks %q:\n%s", want, out)
			}
		}
		host.waitLine(t, regexp.MustCompile(`^joiner 10\.99\.2\.2:\d+ says: world$`))
		hostOut := host.stdout.String()
		if !strings.Contains(hostOut, "punched: direct path to 10.99.2.2:") || !strings.Contains(hostOut, "says: hello") {
			t.Fatalf("host output:\n%s", hostOut)
		}
		if l.counter("direct_1to2") == 0 || l.counter("direct_2to1") == 0 {
			t.Fatalf("no direct traffic forwarded between the NATs (1→2 %d, 2→1 %d)", l.counter("direct_1to2"), l.counter("direct_2to1"))
		}
	}
	if n := l.counter("to_server_nonstun"); n != 0 {
		t.Fatalf("the server received %d non-STUN datagrams: peer traffic went through it", n)
	}
}
