package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
)

// SentinelOptions shapes a Sentinel-managed topology. Zero values take the
// defaults named on each field: short timeouts, so a test's failover takes
// a few seconds.
type SentinelOptions struct {
	// Replicas of the primary (default 2, so a promoted replica still has
	// one replica to satisfy MinReplicasToWrite).
	Replicas int
	// DownAfter is Sentinel's down-after-milliseconds: how long the primary
	// must not answer before a sentinel thinks it down (default 1s).
	DownAfter time.Duration
	// FailoverTimeout is Sentinel's failover-timeout (default 3s).
	FailoverTimeout time.Duration
	// MinReplicasToWrite and MinReplicasMaxLag are set on every data node
	// (a replica's apply once promoted): a primary refuses writes unless
	// that many replicas acknowledged the stream within that many seconds
	// (defaults 1 and 2; -1 for MinReplicasToWrite turns the check off).
	MinReplicasToWrite int
	MinReplicasMaxLag  int
	// Password is set as requirepass (and masterauth, and the sentinels'
	// auth-pass) on every node and every sentinel; empty: no AUTH.
	Password string
	// OwnAddrs puts every node and every sentinel on a loopback address of
	// its own (127.a.b.c, listening and connecting from it), so a test can
	// cut one off from the others with nftables rules on addresses while
	// the clients, on 127.0.0.1, still reach every process.
	OwnAddrs bool
}

// Defaults is o with the default of every field left unset (applying it
// twice is not the same: MinReplicasToWrite -1 becomes 0, then 1).
func (o SentinelOptions) Defaults() SentinelOptions {
	o.defaults()
	return o
}

func (o *SentinelOptions) defaults() {
	if o.Replicas <= 0 {
		o.Replicas = 2
	}
	if o.DownAfter <= 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout <= 0 {
		o.FailoverTimeout = 3 * time.Second
	}
	switch {
	case o.MinReplicasToWrite < 0:
		o.MinReplicasToWrite = 0
	case o.MinReplicasToWrite == 0:
		o.MinReplicasToWrite = 1
	}
	if o.MinReplicasMaxLag <= 0 {
		o.MinReplicasMaxLag = 2
	}
}

// PartitionBound is how long a primary whose replicas stopped
// acknowledging may still take writes with MinReplicasToWrite: it counts a
// replica as good while its last acknowledgement (sent every second) is at
// most MinReplicasMaxLag seconds old, measured in whole seconds and
// re-counted once a second, so up to MinReplicasMaxLag + 2 s after the cut
// (ADR 0007, decision 4). Call it on Topology.Options (defaults applied).
func (o SentinelOptions) PartitionBound() time.Duration {
	return time.Duration(o.MinReplicasMaxLag)*time.Second + 2*time.Second
}

// MasterName is the name the topology's sentinels monitor the primary under.
const MasterName = "rdvprimary"

// Topology is one primary, its replicas and three sentinels (quorum 2), each
// a real process on a free loopback port.
type Topology struct {
	Nodes     []*Server // data nodes; Nodes[0] was the first primary
	Sentinels []*Server
	Options   SentinelOptions
	dir       string
}

// MissingSentinel says why Sentinel tests cannot run, or "" when they can.
func MissingSentinel() string {
	if why := Missing(); why != "" {
		return why
	}
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		return "redis-sentinel is not installed (apt-get install redis-sentinel): " + err.Error()
	}
	return ""
}

// RequireSentinel starts a topology for t, stopped when t ends; it skips t
// when the binaries are missing, or fails it when RequireEnv is set.
func RequireSentinel(t testing.TB, o SentinelOptions) *Topology {
	t.Helper()
	if why := MissingSentinel(); why != "" {
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s is set but %s", RequireEnv, why)
		}
		t.Skip(why)
	}
	top, err := StartSentinel(t.TempDir(), o)
	if err != nil {
		t.Fatalf("starting the Sentinel topology: %v", err)
	}
	t.Cleanup(top.Stop)
	return top
}

// StartSentinel starts the data nodes and the sentinels (their rewritable
// configuration files live in dir) and waits (at most 30 s) until every
// replica is in sync and every sentinel knows every replica and the other
// sentinels, so a failover can be authorised.
func StartSentinel(dir string, o SentinelOptions) (*Topology, error) {
	o.defaults()
	top := &Topology{Options: o, dir: dir}
	node := NodeArgs(dir, o)
	host := func() string { return "127.0.0.1" }
	if o.OwnAddrs {
		host = ownAddr
	}
	primary, err := startOn(host(), node...)
	if err != nil {
		return nil, err
	}
	top.Nodes = append(top.Nodes, primary)
	phost, pport, _ := net.SplitHostPort(primary.Addr)
	for range o.Replicas {
		r, err := startOn(host(), append(node, "--replicaof", phost, pport)...)
		if err != nil {
			top.Stop()
			return nil, err
		}
		top.Nodes = append(top.Nodes, r)
	}
	for i := range 3 {
		s, err := startSentinel(dir, i, host(), primary.Addr, o)
		if err != nil {
			top.Stop()
			return nil, err
		}
		top.Sentinels = append(top.Sentinels, s)
	}
	if err := top.waitSettled(30 * time.Second); err != nil {
		top.Stop()
		return nil, err
	}
	return top, nil
}

// NodeArgs are the redis-server arguments of a data node of a topology
// with options o (defaults applied: Topology.Options, or Defaults())
// keeping its files in dir.
func NodeArgs(dir string, o SentinelOptions) []string {
	// A replica keeps the snapshot it syncs from in its directory: dir,
	// not the test's working directory.
	node := []string{"--save", "", "--appendonly", "no", "--dir", dir,
		// Replicas sync at once, not after diskless sync's default 5 s delay.
		"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
		"--min-replicas-to-write", strconv.Itoa(o.MinReplicasToWrite),
		"--min-replicas-max-lag", strconv.Itoa(o.MinReplicasMaxLag)}
	if o.Password != "" {
		node = append(node, "--requirepass", o.Password, "--masterauth", o.Password)
	}
	return node
}

// sentinelLog is where sentinel i of a topology in dir writes its log.
func sentinelLog(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", i))
}

// SentinelConf is the configuration file, line by line, of sentinel i of a
// topology with options o (defaults applied): listening on addr, keeping
// its files in dir, watching the primary at primary with the other two
// (quorum 2).
func SentinelConf(dir string, i int, addr, primary string, o SentinelOptions) []string {
	host, port, _ := net.SplitHostPort(addr)
	phost, pport, _ := net.SplitHostPort(primary)
	conf := []string{
		"port " + port,
		"bind " + host,
		"dir " + dir,
		"logfile " + sentinelLog(dir, i),
		fmt.Sprintf("sentinel monitor %s %s %s 2", MasterName, phost, pport),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, o.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s %d", MasterName, o.FailoverTimeout.Milliseconds()),
		// Every replica follows the new primary at once.
		fmt.Sprintf("sentinel parallel-syncs %s %d", MasterName, o.Replicas),
	}
	if o.Password != "" {
		conf = append(conf, "requirepass "+o.Password, fmt.Sprintf("sentinel auth-pass %s %s", MasterName, o.Password))
	}
	return conf
}

func startSentinel(dir string, i int, host, primary string, o SentinelOptions) (*Server, error) {
	port, err := freePort(host)
	if err != nil {
		return nil, err
	}
	conf := SentinelConf(dir, i, net.JoinHostPort(host, strconv.Itoa(port)), primary, o)
	if host != "127.0.0.1" {
		conf = append(conf, ownAddrSettings(host)...)
	}
	path := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
	if err := os.WriteFile(path, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort(host, strconv.Itoa(port)), bin: "redis-sentinel", args: []string{path}}
	return s, s.run()
}

// SentinelAddrs lists the sentinels' addresses.
func (t *Topology) SentinelAddrs() []string {
	a := make([]string, len(t.Sentinels))
	for i, s := range t.Sentinels {
		a[i] = s.Addr
	}
	return a
}

// Node returns the data node listening on addr, or nil.
func (t *Topology) Node(addr string) *Server {
	for _, n := range t.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	return nil
}

// Do sends one command to addr (a node or a sentinel) with the topology's
// password, on a connection of its own.
func (t *Topology) Do(ctx context.Context, addr string, args ...string) (rueidis.RedisMessage, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: t.Options.Password,
		DisableCache: true, DisableRetry: true, ForceSingleClient: true,
		Dialer: net.Dialer{Timeout: time.Second}})
	if err != nil {
		return rueidis.RedisMessage{}, err
	}
	defer c.Close()
	return c.Do(ctx, c.B().Arbitrary(args...).Build()).ToMessage()
}

// PrimaryAddr is the primary's address as the first sentinel that answers
// names it.
func (t *Topology) PrimaryAddr(ctx context.Context) (string, error) {
	var errs []error
	for _, s := range t.Sentinels {
		a, err := t.primaryBy(ctx, s.Addr)
		if err == nil {
			return a, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func (t *Topology) primaryBy(ctx context.Context, sentinel string) (string, error) {
	m, err := t.Do(ctx, sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterName)
	if err != nil {
		return "", err
	}
	hp, err := m.AsStrSlice()
	if err != nil || len(hp) != 2 {
		return "", fmt.Errorf("sentinel %s: unexpected answer %v (%v)", sentinel, hp, err)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// KillPrimary SIGKILLs the current primary (no shutdown, nothing more is
// replicated) and returns it.
func (t *Topology) KillPrimary(ctx context.Context) (*Server, error) {
	addr, err := t.PrimaryAddr(ctx)
	if err != nil {
		return nil, err
	}
	n := t.Node(addr)
	if n == nil {
		return nil, fmt.Errorf("the sentinels name %s, which is not a node of this topology", addr)
	}
	n.Stop()
	return n, nil
}

// WaitForPromotion waits until every sentinel names a primary other than
// old and that node says it is a primary; it returns the new primary's
// address.
func (t *Topology) WaitForPromotion(ctx context.Context, old string, timeout time.Duration) (string, error) {
	return t.waitForAgreedPrimary(ctx, timeout, "no promotion", func(addr string) error {
		if addr == old {
			return fmt.Errorf("the sentinels still name %s", old)
		}
		if role, err := t.role(ctx, addr); err != nil || role != "master" {
			return fmt.Errorf("%s is not a primary yet (role %q, %v)", addr, role, err)
		}
		return nil
	})
}

// WaitForWritablePrimary waits until every sentinel names the same
// primary and that node takes a write (not a replica's READONLY, not
// NOREPLICAS while its replicas resync), and returns its address. A test
// checks the data there after a failover: Sentinel may have promoted
// again since WaitForPromotion returned (a new primary silent for
// down-after is failed over in turn).
func (t *Topology) WaitForWritablePrimary(ctx context.Context, timeout time.Duration) (string, error) {
	return t.waitForAgreedPrimary(ctx, timeout, "no writable primary", func(addr string) error {
		if _, err := t.Do(ctx, addr, "SET", "redistest:writable", "1"); err != nil {
			return fmt.Errorf("%s refuses a write: %w", addr, err)
		}
		return nil
	})
}

// waitForAgreedPrimary polls until every sentinel names the same primary
// and ready accepts it, and returns its address; after timeout it fails
// with none (what did not happen) and the last reason.
func (t *Topology) waitForAgreedPrimary(ctx context.Context, timeout time.Duration, none string, ready func(addr string) error) (string, error) {
	deadline := time.Now().Add(timeout)
	last := errors.New("no sentinel answered")
	for time.Now().Before(deadline) {
		addr, err := t.agreedPrimary(ctx)
		if err == nil {
			if err = ready(addr); err == nil {
				return addr, nil
			}
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return "", fmt.Errorf("%s within %v: %w", none, timeout, last)
}

// agreedPrimary is the primary every live sentinel names, or an error when
// they disagree.
func (t *Topology) agreedPrimary(ctx context.Context) (string, error) {
	var addr string
	for _, s := range t.Sentinels {
		a, err := t.primaryBy(ctx, s.Addr)
		if err != nil {
			return "", err
		}
		if addr != "" && a != addr {
			return "", fmt.Errorf("sentinels disagree: %s and %s", addr, a)
		}
		addr = a
	}
	return addr, nil
}

func (t *Topology) role(ctx context.Context, addr string) (string, error) {
	m, err := t.Do(ctx, addr, "ROLE")
	if err != nil {
		return "", err
	}
	a, err := m.ToArray()
	if err != nil || len(a) == 0 {
		return "", fmt.Errorf("ROLE: unexpected answer (%v)", err)
	}
	return a[0].ToString()
}

// waitSettled waits until the primary has every replica online and every
// sentinel knows the replicas and the other sentinels.
func (t *Topology) waitSettled(timeout time.Duration) error {
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	want := strconv.Itoa(len(t.Nodes) - 1)
	others := strconv.Itoa(len(t.Sentinels) - 1)
	last := errors.New("not checked")
	for time.Now().Before(deadline) {
		if last = t.settled(ctx, want, others); last == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the topology did not settle within %v: %w", timeout, last)
}

func (t *Topology) settled(ctx context.Context, replicas, otherSentinels string) error {
	m, err := t.Do(ctx, t.Nodes[0].Addr, "INFO", "replication")
	if err != nil {
		return err
	}
	info, _ := m.ToString()
	if online := strings.Count(info, "state=online"); strconv.Itoa(online) != replicas {
		return fmt.Errorf("%d of %s replicas online", online, replicas)
	}
	for _, s := range t.Sentinels {
		m, err := t.Do(ctx, s.Addr, "SENTINEL", "MASTER", MasterName)
		if err != nil {
			return err
		}
		f, err := m.AsStrMap()
		if err != nil {
			return err
		}
		if f["num-slaves"] != replicas || f["num-other-sentinels"] != otherSentinels || f["flags"] != "master" {
			return fmt.Errorf("sentinel %s sees %s replicas, %s other sentinels, flags %s",
				s.Addr, f["num-slaves"], f["num-other-sentinels"], f["flags"])
		}
	}
	return nil
}

// Stop kills every process of the topology. Idempotent.
func (t *Topology) Stop() {
	for _, s := range t.Sentinels {
		s.Stop()
	}
	for _, n := range t.Nodes {
		n.Stop()
	}
}
