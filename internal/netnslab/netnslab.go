//go:build linux

// Package netnslab builds small networks of Linux network namespaces for
// the system tests (NAT hole punching, relaying, partitions between
// instances and their store): namespaces, veth links between them or to
// the test's own namespace, nftables rules and counters, all deleted at
// cleanup even when the test fails. The tests need root, iproute2 and
// nftables; Require skips them elsewhere, except in CI.
package netnslab

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Require skips a namespace test where it cannot run, except in CI
// (CI=true), which runs the tests as root with iproute2 and nftables and
// must never skip them.
func Require(t *testing.T) {
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

// Lab is one set of namespaces, each named by the lab's prefix and a short
// name. The name "" everywhere means the test's own namespace.
type Lab struct {
	t      *testing.T
	Prefix string
}

// New creates a namespace for each of names (prefix+name, loopback up);
// they are deleted at cleanup, and with them their ends of veth links.
// The prefix tells the labs of concurrent runs and tests apart.
func New(t *testing.T, prefix string, names ...string) *Lab {
	t.Helper()
	l := &Lab{t: t, Prefix: prefix}
	t.Cleanup(func() {
		for _, n := range names {
			// Deleting a namespace that was never made fails harmlessly.
			exec.Command("ip", "netns", "del", l.NS(n)).Run()
		}
	})
	for _, n := range names {
		l.Sh("ip", "netns", "add", l.NS(n))
		l.In(n, "ip", "link", "set", "lo", "up")
	}
	return l
}

// NS is the full name of namespace name.
func (l *Lab) NS(name string) string { return l.Prefix + name }

// Exec is the command prefix that runs a program inside namespace name
// (nil for the test's own).
func (l *Lab) Exec(name string) []string {
	if name == "" {
		return nil
	}
	return []string{"ip", "netns", "exec", l.NS(name)}
}

// Command is argv run inside namespace name, not started (for a long
// running process the test starts and stops itself).
func (l *Lab) Command(name string, argv ...string) *exec.Cmd {
	full := append(l.Exec(name), argv...)
	return exec.Command(full[0], full[1:]...)
}

// Sh runs a command and returns its output, failing the test on an error.
func (l *Lab) Sh(args ...string) string {
	l.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// In runs a command inside namespace name.
func (l *Lab) In(name string, args ...string) string {
	l.t.Helper()
	return l.Sh(append(l.Exec(name), args...)...)
}

// NFT loads a ruleset into namespace name.
func (l *Lab) NFT(name, rules string) {
	l.t.Helper()
	argv := append(l.Exec(name), "nft", "-f", "-")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		l.t.Fatalf("nft in %q: %v\n%s\n%s", name, err, out, rules)
	}
}

// Link connects namespaces a and b with a veth pair (interface ifa in a,
// ifb in b), gives each end its address (with prefix length) and brings
// both up.
func (l *Lab) Link(a, ifa, addrA, b, ifb, addrB string) {
	l.t.Helper()
	args := []string{"ip", "link", "add", "name", ifa}
	if a != "" {
		args = append(args, "netns", l.NS(a))
	}
	args = append(args, "type", "veth", "peer", "name", ifb)
	if b != "" {
		args = append(args, "netns", l.NS(b))
	}
	l.Sh(args...)
	l.In(a, "ip", "addr", "add", addrA, "dev", ifa)
	l.In(b, "ip", "addr", "add", addrB, "dev", ifb)
	l.In(a, "ip", "link", "set", "dev", ifa, "up")
	l.In(b, "ip", "link", "set", "dev", ifb, "up")
}

var packetsRe = regexp.MustCompile(`packets (\d+)`)

// Counter reads the packets of the named nftables counter of table (in
// family, e.g. "ip") in namespace name.
func (l *Lab) Counter(name, family, table, counter string) int {
	l.t.Helper()
	out := l.In(name, "nft", "list", "counter", family, table, counter)
	m := packetsRe.FindStringSubmatch(out)
	if m == nil {
		l.t.Fatalf("cannot read counter %s:\n%s", counter, out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
