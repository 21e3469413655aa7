//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// requireNetns skips a namespace test where it cannot run, except in CI
// (CI=true), which runs the tests as root with iproute2 and nftables and
// must never skip them.
func requireNetns(t *testing.T) {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("CI") != "" {
		skip = t.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("this test needs root (it creates network namespaces); CI runs it as root")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip("this test needs %s (apt-get install iproute2 nftables; .ci/run does)", tool)
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

// nsLab puts each of n instances in a network namespace of its own, joined
// to the test's namespace by a veth pair: instance i (1-based) has
// 10.<net>.<i>.2, the test's side 10.<net>.<i>.1. Services the test runs
// (redis-server) listen on the test's side, so an nftables rule inside one
// instance's namespace cuts that instance alone. The namespaces (and with
// them the veths) are deleted at cleanup, even when the test fails.
type nsLab struct {
	t      *testing.T
	prefix string
	net    int // second octet, per process, so concurrent runs do not meet
	n      int
}

// labs counts the labs of this process: each gets its own names and
// addresses, since a deleted namespace's veths vanish asynchronously.
var labs atomic.Int32

func newNSLab(t *testing.T, n int) *nsLab {
	t.Helper()
	k := int(labs.Add(1))
	tag := fmt.Sprintf("%d%c", os.Getpid()%100000, 'a'+k%26)
	l := &nsLab{t: t, prefix: "rdvha" + tag + "-", net: 150 + (os.Getpid()+k)%100, n: n}
	t.Cleanup(func() {
		for i := 1; i <= n; i++ {
			// Deleting what was never made fails harmlessly.
			exec.Command("nft", "delete", "table", "inet", l.outer(i)).Run()
			exec.Command("ip", "link", "del", l.outer(i)).Run()
			exec.Command("ip", "netns", "del", l.ns(i)).Run()
		}
	})
	for i := 1; i <= n; i++ {
		l.sh("ip", "netns", "add", l.ns(i))
		l.in(i, "ip", "link", "set", "lo", "up")
		outer := l.outer(i)
		l.sh("ip", "link", "add", "name", outer, "type", "veth", "peer", "name", "eth0", "netns", l.ns(i))
		l.sh("ip", "addr", "add", l.gateway(i)+"/24", "dev", outer)
		l.sh("ip", "link", "set", "dev", outer, "up")
		l.in(i, "ip", "addr", "add", l.Addr(i)+"/24", "dev", "eth0")
		l.in(i, "ip", "link", "set", "dev", "eth0", "up")
		l.in(i, "ip", "route", "add", "default", "via", l.gateway(i))
	}
	return l
}

func (l *nsLab) ns(i int) string { return fmt.Sprintf("%s%d", l.prefix, i) }

// outer is the name of instance i's veth on the test's side.
func (l *nsLab) outer(i int) string { return fmt.Sprintf("rvh%s%d", l.prefix[5:len(l.prefix)-1], i) }

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
func (l *nsLab) Exec(i int) []string { return []string{"ip", "netns", "exec", l.ns(i)} }

func (l *nsLab) sh(args ...string) string {
	l.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (l *nsLab) in(i int, args ...string) string {
	l.t.Helper()
	return l.sh(append(l.Exec(i), args...)...)
}

// Cut partitions instance i from what match selects, both ways and
// silently, as a broken network does: segments from the instance matching
// match (an nftables expression, e.g. "ip daddr 10.1.1.1 tcp dport 6379")
// are dropped where they arrive in the test's namespace, segments to it
// matching reverse where they arrive in its own. Nothing is dropped on its
// way out (a local output drop fails the sender's write at once with EPERM,
// which no real partition does). Heal ends it.
func (l *nsLab) Cut(i int, match, reverse string) {
	l.t.Helper()
	l.nft(nil, fmt.Sprintf(`table inet %s {
	chain in {
		type filter hook input priority 0; policy accept;
		iifname "%s" %s drop
	}
}
`, l.outer(i), l.outer(i), match))
	l.nft(l.Exec(i), fmt.Sprintf(`table inet rdvcut {
	chain in {
		type filter hook input priority 0; policy accept;
		%s drop
	}
}
`, reverse))
}

// nft loads rules, in the namespace of prefix (nil: the test's own).
func (l *nsLab) nft(prefix []string, rules string) {
	l.t.Helper()
	argv := append(append([]string(nil), prefix...), "nft", "-f", "-")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("nft: %v\n%s\n%s", err, out, rules)
	}
}

// Heal removes instance i's partition.
func (l *nsLab) Heal(i int) {
	l.t.Helper()
	l.sh("nft", "delete", "table", "inet", l.outer(i))
	l.in(i, "nft", "delete", "table", "inet", "rdvcut")
}
