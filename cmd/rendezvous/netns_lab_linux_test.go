//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
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

func newNSLab(t *testing.T, n int) *nsLab {
	t.Helper()
	l := &nsLab{t: t, prefix: fmt.Sprintf("rdvha%d-", os.Getpid()%100000), net: 150 + os.Getpid()%100, n: n}
	t.Cleanup(func() {
		for i := 1; i <= n; i++ {
			// Deleting a namespace that was never made fails harmlessly.
			exec.Command("ip", "netns", "del", l.ns(i)).Run()
		}
	})
	for i := 1; i <= n; i++ {
		l.sh("ip", "netns", "add", l.ns(i))
		l.in(i, "ip", "link", "set", "lo", "up")
		outer := fmt.Sprintf("rvh%d%c", os.Getpid()%100000, 'a'+i-1)
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

// Cut drops, inside instance i's namespace, every TCP segment matching
// match (an nftables expression of the instance's own side, e.g.
// "tcp dport 6379") out and its reverse (reverse) in: a partition both
// ways, silent (no reset), as a broken network is. Heal ends it.
func (l *nsLab) Cut(i int, match, reverse string) {
	l.t.Helper()
	rules := fmt.Sprintf(`table inet rdvcut {
	chain out {
		type filter hook output priority 0; policy accept;
		%s drop
	}
	chain in {
		type filter hook input priority 0; policy accept;
		%s drop
	}
}
`, match, reverse)
	cmd := exec.Command("ip", append(l.Exec(i)[1:], "nft", "-f", "-")...)
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("nft in %s: %v\n%s\n%s", l.ns(i), err, out, rules)
	}
}

// Heal removes instance i's partition.
func (l *nsLab) Heal(i int) {
	l.t.Helper()
	l.in(i, "nft", "delete", "table", "inet", "rdvcut")
}
