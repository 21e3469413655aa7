//go:build linux

package client

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/internal/e2e"
)

// nsSentinel is a Sentinel-managed Redis inside one namespace of a lab, on
// that namespace's own loopback (every port is free in a new namespace):
// the topology of redistest.StartSentinel, which runs on the host's
// loopback and so cannot serve instances inside a namespace. The test
// process reaches it through redis-cli run inside the namespace.
type nsSentinel struct {
	l         *lab
	ns        string
	primary   int   // the first primary's port
	replicas  []int // two: a promoted one still has a replica to write with
	sentinels []int // three, quorum 2
}

// The data nodes' and the sentinels' ports in the namespace.
const (
	nsPrimaryPort  = 6379
	nsReplicaPort  = 6380  // and the next one
	nsSentinelPort = 26379 // and the next two
)

// requireSentinelBinaries skips t without redis-server and redis-sentinel,
// except in CI (CI=true or RDV_REQUIRE_REDIS), which installs them.
func requireSentinelBinaries(t *testing.T) {
	t.Helper()
	if why := redistest.MissingSentinel(); why != "" {
		if os.Getenv("CI") != "" || os.Getenv(redistest.RequireEnv) != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
}

// startSentinelRedis starts, inside namespace ns, a primary and two
// replicas with the documented deployment's min-replicas-to-write 1 and
// min-replicas-max-lag 2 (a primary takes writes only while a replica
// acknowledges them; with one replica, a promoted one would refuse every
// write until Sentinel turns the old primary into its replica, up to 10 s
// later), then three sentinels once the replicas are in sync (a sentinel
// learns the replicas from the primary's INFO when it connects). It
// returns the sentinels' addresses for --redis-sentinel. Everything is
// killed at cleanup.
func (l *lab) startSentinelRedis(ns string) (*nsSentinel, []string) {
	l.t.Helper()
	s := &nsSentinel{l: l, ns: ns, primary: nsPrimaryPort, replicas: []int{nsReplicaPort, nsReplicaPort + 1}}
	dir := l.t.TempDir()
	// redistest's topology (its default options), on the namespace's
	// loopback.
	opts := redistest.SentinelOptions{Replicas: len(s.replicas)}.Defaults()
	node := append([]string{"--bind", "127.0.0.1"}, redistest.NodeArgs(dir, opts)...)
	l.startRedisProcess(ns, s.primary, "redis-server", append([]string{"--port", strconv.Itoa(s.primary)}, node...)...)
	for _, r := range s.replicas {
		l.startRedisProcess(ns, r, "redis-server", append([]string{"--port", strconv.Itoa(r),
			"--replicaof", "127.0.0.1", strconv.Itoa(s.primary)}, node...)...)
	}
	l.waitFor("the replicas to be in sync", func() error { return s.replicasOnline(s.primary, len(s.replicas)) })
	var addrs []string
	for i := range 3 {
		port := nsSentinelPort + i
		conf := redistest.SentinelConf(dir, i, "127.0.0.1:"+strconv.Itoa(port), "127.0.0.1:"+strconv.Itoa(s.primary), opts)
		path := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i)) // Sentinel rewrites it
		if err := os.WriteFile(path, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
			l.t.Fatal(err)
		}
		l.startRedisProcess(ns, port, "redis-sentinel", path)
		s.sentinels = append(s.sentinels, port)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(port))
	}
	return s, addrs
}

// startRedisProcess runs bin (redis-server or redis-sentinel) with args
// inside namespace ns and waits, at most hangGuard, until it answers PING
// on 127.0.0.1:port there. It is killed at cleanup.
func (l *lab) startRedisProcess(ns string, port int, bin string, args ...string) {
	l.t.Helper()
	cmd := l.Command(ns, append([]string{bin}, args...)...)
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("cannot start %s in %s: %v", bin, ns, err)
	}
	l.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	l.waitFor(fmt.Sprintf("%s on port %d to answer PING", bin, port), func() error {
		if out := l.redisCLI(ns, port, "PING"); out != "PONG" {
			return fmt.Errorf("PING answered %q", out)
		}
		return nil
	})
}

// redisCLI runs one redis-cli command against 127.0.0.1:port inside
// namespace ns and returns its raw output, trimmed ("" when it fails).
func (l *lab) redisCLI(ns string, port int, args ...string) string {
	out, _ := l.Command(ns, append([]string{"redis-cli", "--raw", "-h", "127.0.0.1", "-p", strconv.Itoa(port)}, args...)...).Output()
	return strings.TrimSpace(string(out))
}

func (s *nsSentinel) cli(port int, args ...string) string { return s.l.redisCLI(s.ns, port, args...) }

// waitFor polls cond until it holds, failing the test after hangGuard.
func (l *lab) waitFor(what string, cond func() error) {
	l.t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replicasOnline says whether the node on port is a primary with n
// replicas online, at least one counted toward min-replicas-to-write (it
// counts once a second, after a replica's acknowledgement: until then the
// primary refuses writes).
func (s *nsSentinel) replicasOnline(port, n int) error {
	info := s.cli(port, "INFO", "replication")
	for _, want := range []string{"role:master", "connected_slaves:" + strconv.Itoa(n), "min_slaves_good_slaves:"} {
		if !strings.Contains(info, want) {
			return fmt.Errorf("no %q on %d:\n%s", want, port, info)
		}
	}
	if strings.Count(info, "state=online") < n || strings.Contains(info, "min_slaves_good_slaves:0") {
		return fmt.Errorf("%d replicas not online and counted on %d:\n%s", n, port, info)
	}
	return nil
}

// nsFailoverTimeout is the sentinels' failover-timeout (redistest's
// default): service after a promotion is back within it + 2 s.
const nsFailoverTimeout = 3 * time.Second

// switchWatch records every +switch-master event each sentinel publishes
// (redis-cli SUBSCRIBE in the namespace, one per sentinel).
type switchWatch struct {
	outs []*e2e.LockedBuffer
}

// watchSwitchMaster subscribes to +switch-master on every sentinel and
// waits until each subscription is confirmed.
func (s *nsSentinel) watchSwitchMaster() *switchWatch {
	s.l.t.Helper()
	w := &switchWatch{}
	for _, p := range s.sentinels {
		out := new(e2e.LockedBuffer)
		cmd := s.l.Command(s.ns, "redis-cli", "--csv", "-h", "127.0.0.1", "-p", strconv.Itoa(p), "SUBSCRIBE", "+switch-master")
		cmd.Stdout = out
		if err := cmd.Start(); err != nil {
			s.l.t.Fatalf("redis-cli SUBSCRIBE on sentinel %d: %v", p, err)
		}
		s.l.t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		w.outs = append(w.outs, out)
		s.l.waitFor(fmt.Sprintf("the +switch-master subscription on sentinel %d", p), func() error {
			if !strings.Contains(out.String(), `"subscribe","+switch-master",1`) {
				return fmt.Errorf("output so far %q", out.String())
			}
			return nil
		})
	}
	return w
}

// events are the +switch-master payloads each sentinel published so far
// ("<master> <old ip> <old port> <new ip> <new port>").
func (w *switchWatch) events() [][]string {
	all := make([][]string, len(w.outs))
	for i, out := range w.outs {
		for _, line := range strings.Split(out.String(), "\n") {
			if p, ok := strings.CutPrefix(strings.TrimSpace(line), `"message","+switch-master",`); ok {
				all[i] = append(all[i], strings.Trim(p, `"`))
			}
		}
	}
	return all
}

// plannedFailover runs `rendezvous failover` (the supported planned
// failover) in the namespace against the sentinels, and returns the port
// of the promoted primary.
func (s *nsSentinel) plannedFailover(sentinels []string) int {
	s.l.t.Helper()
	bin, err := build.Path("rendezvous")
	if err != nil {
		s.l.t.Fatal(err)
	}
	cmd := s.l.Command(s.ns, bin, "failover", "--redis-sentinel", strings.Join(sentinels, ","), "--redis-master", redistest.MasterName)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.l.t.Fatalf("rendezvous failover: %v\n%s", err, out)
	}
	s.l.t.Logf("rendezvous failover:\n%s", out)
	m := regexp.MustCompile(`promoted 127\.0\.0\.1:(\d+) \(was 127\.0\.0\.1:(\d+)\)`).FindSubmatch(out)
	if m == nil || string(m[2]) != strconv.Itoa(s.primary) {
		s.l.t.Fatalf("rendezvous failover did not report a promotion away from %d:\n%s", s.primary, out)
	}
	port, _ := strconv.Atoi(string(m[1]))
	return port
}

// waitForwardingOn waits until n instances listen for forwarded datagrams
// on the node on port (each subscribes to its own channel, "…fwd:<ID>").
func (s *nsSentinel) waitForwardingOn(port, n int) {
	s.l.t.Helper()
	s.l.waitFor(fmt.Sprintf("%d forwarding subscriptions on %d", n, port), func() error {
		out := s.cli(port, "PUBSUB", "CHANNELS", "*fwd:*")
		if got := len(strings.Fields(out)); got != n {
			return fmt.Errorf("%d subscribed: %q", got, out)
		}
		return nil
	})
}
