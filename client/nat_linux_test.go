//go:build linux

package client

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/internal/netnslab"
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
func requireNetns(t *testing.T) { netnslab.Require(t) }

// lab is one set of namespaces, deleted at cleanup even when the test fails.
type lab struct {
	*netnslab.Lab
	t *testing.T
}

// newLab builds the namespaces; tag tells labs of one run apart, random1
// and random2 make nat1 / nat2 fully-random (symmetric). pub also carries
// 10.99.0.2, where the relay tests run coturn.
func newLab(t *testing.T, tag byte, random1, random2 bool) *lab {
	t.Helper()
	l := &lab{Lab: netnslab.New(t, fmt.Sprintf("rdv%d%c-", os.Getpid()%100000, tag), "pub", "nat1", "nat2", "host", "join"), t: t}
	// The "internet": pub routes between the two NATs and hosts the server.
	l.Link("pub", "p1", "10.99.1.1/24", "nat1", "wan0", "10.99.1.2/24")
	l.Link("pub", "p2", "10.99.2.1/24", "nat2", "wan0", "10.99.2.2/24")
	l.In("pub", "ip", "addr", "add", "10.99.0.1/32", "dev", "lo")
	l.In("pub", "ip", "addr", "add", "10.99.0.2/32", "dev", "lo")
	l.In("pub", "sysctl", "-qw", "net.ipv4.ip_forward=1")
	// The LANs.
	l.Link("nat1", "lan0", "192.168.1.1/24", "host", "eth0", "192.168.1.2/24")
	l.Link("nat2", "lan0", "192.168.2.1/24", "join", "eth0", "192.168.2.2/24")
	l.In("host", "ip", "route", "add", "default", "via", "192.168.1.1")
	l.In("join", "ip", "route", "add", "default", "via", "192.168.2.1")
	for i, n := range []string{"nat1", "nat2"} {
		l.In(n, "sysctl", "-qw", "net.ipv4.ip_forward=1")
		l.In(n, "ip", "route", "add", "default", "via", fmt.Sprintf("10.99.%d.1", i+1))
		mode := "masquerade" // port-preserving when it can: endpoint-independent mapping
		if (random1 && n == "nat1") || (random2 && n == "nat2") {
			mode = "masquerade fully-random" // a new random port per destination
		}
		l.NFT(n, `table ip nat {
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
	l.NFT("pub", `table ip rdvcount {
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

// counter reads one of the counters newLab puts in pub.
func (l *lab) counter(name string) int {
	l.t.Helper()
	return l.Counter("pub", "ip", "rdvcount", name)
}

func natCase(t *testing.T, symmetric bool) {
	l := newLab(t, "es"[b2i(symmetric)], false, symmetric)
	srv := startServer(t, []string{"ip", "netns", "exec", l.NS("pub")},
		"--http-addr", "10.99.0.1:8080", "--udp-addr", "10.99.0.1:3478")
	server := "http://10.99.0.1:8080"
	host := startPeer(t, l.Exec("host"), srv.tokens["publisher"], "host", "--server", server, "--name", "nat test", "--echo")
	id := host.waitLine(t, publishedRe)
	join := startPeer(t, l.Exec("join"), srv.tokens["client"], "join", "--server", server, "--listing", id,
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
