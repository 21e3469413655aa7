//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/internal/netnslab"
)

// requireNetns skips a namespace test where it cannot run, except in CI.
func requireNetns(t *testing.T) { netnslab.Require(t) }

// nsLab puts each of n instances in a network namespace of its own, joined
// to the test's namespace by a veth pair: instance i (1-based) has
// 10.<net>.<i>.2, the test's side 10.<net>.<i>.1. Services the test runs
// (redis-server) listen on the test's side, so an nftables rule inside one
// instance's namespace cuts that instance alone. The namespaces (and with
// them the veths) are deleted at cleanup, even when the test fails.
type nsLab struct {
	*netnslab.Lab
	tag string
	net int // second octet, per process, so concurrent runs do not meet
	n   int
}

// labs counts the labs of this process: each gets its own names and
// addresses, since a deleted namespace's veths vanish asynchronously.
var labs atomic.Int32

func newNSLab(t *testing.T, n int) *nsLab {
	t.Helper()
	k := int(labs.Add(1))
	tag := fmt.Sprintf("%d%c", os.Getpid()%100000, 'a'+k%26)
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, strconv.Itoa(i))
	}
	l := &nsLab{Lab: netnslab.New(t, "rdvha"+tag+"-", names...), tag: tag, net: 150 + (os.Getpid()+k)%100, n: n}
	t.Cleanup(func() { // before the namespaces are deleted
		for i := 1; i <= n; i++ {
			// Deleting what was never made fails harmlessly.
			exec.Command("nft", "delete", "table", "inet", l.outer(i)).Run()
			exec.Command("ip", "link", "del", l.outer(i)).Run()
		}
	})
	for i := 1; i <= n; i++ {
		l.Link("", l.outer(i), l.gateway(i)+"/24", l.ns(i), "eth0", l.Addr(i)+"/24")
		l.In(l.ns(i), "ip", "route", "add", "default", "via", l.gateway(i))
	}
	return l
}

// ns is instance i's namespace's name in the lab.
func (l *nsLab) ns(i int) string { return strconv.Itoa(i) }

// outer is the name of instance i's veth on the test's side.
func (l *nsLab) outer(i int) string { return fmt.Sprintf("rvh%s%d", l.tag, i) }

// Addr is instance i's address; gateway the test's address facing it.
func (l *nsLab) Addr(i int) string    { return fmt.Sprintf("10.%d.%d.2", l.net, i) }
func (l *nsLab) gateway(i int) string { return fmt.Sprintf("10.%d.%d.1", l.net, i) }

// Gateways are the test's addresses, one per instance (what redis-server
// binds to be reachable from every namespace).
func (l *nsLab) Gateways() []string {
	var g []string
	for i := 1; i <= l.n; i++ {
		g = append(g, l.gateway(i))
	}
	return g
}

// Exec is the command prefix that runs a program inside instance i's
// namespace (startProcWrapped's wrapper).
func (l *nsLab) Exec(i int) []string { return l.Lab.Exec(l.ns(i)) }

// Cut partitions instance i from what match selects, both ways and
// silently, as a broken network does: segments from the instance matching
// match (an nftables expression, e.g. "ip daddr 10.1.1.1 tcp dport 6379")
// are dropped where they arrive in the test's namespace, segments to it
// matching reverse where they arrive in its own. Nothing is dropped on its
// way out (a local output drop fails the sender's write at once with EPERM,
// which no real partition does). Heal ends it.
func (l *nsLab) Cut(i int, match, reverse string) {
	l.Lab.NFT("", fmt.Sprintf(`table inet %s {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "%s" %s drop
	}
}
`, l.outer(i), l.outer(i), match))
	l.Lab.NFT(l.ns(i), fmt.Sprintf(`table inet rdvcut {
	chain in {
		type filter hook input priority 0; policy accept;
		%s drop
	}
}
`, reverse))
}

// Heal removes instance i's partition.
func (l *nsLab) Heal(i int) {
	l.Sh("nft", "delete", "table", "inet", l.outer(i))
	l.In(l.ns(i), "nft", "delete", "table", "inet", "rdvcut")
}
