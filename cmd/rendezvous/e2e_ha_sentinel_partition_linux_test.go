//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/internal/netnslab"
)

var primaryCuts atomic.Uint32

// primaryCut drops, on input, every packet between address a and each of
// others, both ways: established connections stall as over a cut link
// (nothing is refused or reset), new ones time out. The table is this
// process's own and names only the test topology's own loopback
// addresses, so nothing else on the machine is touched.
type primaryCut struct {
	t     *testing.T
	table string
}

func cutPrimaryOff(t *testing.T, a string, others []string) *primaryCut {
	t.Helper()
	p := &primaryCut{t: t, table: fmt.Sprintf("rdvha%d_%d", os.Getpid(), primaryCuts.Add(1))}
	set := strings.Join(others, ", ")
	rules := fmt.Sprintf(`table ip %s {
	chain input {
		type filter hook input priority -10; policy accept;
		ip saddr %s ip daddr { %s } drop
		ip saddr { %s } ip daddr %s drop
	}
}
`, p.table, a, set, set, a)
	netnslab.New(t, "").NFT("", rules) // in the test's own namespace
	t.Cleanup(p.heal)
	return p
}

// heal removes the partition. Idempotent.
func (p *primaryCut) heal() {
	if p.table == "" {
		return
	}
	if out, err := exec.Command("nft", "delete", "table", "ip", p.table).CombinedOutput(); err != nil {
		p.t.Errorf("nft delete table: %v\n%s", err, out)
	}
	p.table = ""
}

// TestHASentinelPrimaryPartitioned: two instances on a Sentinel topology
// (every node and sentinel on a loopback address of its own) serve a
// mixed load of two tenants' real clients when nftables cuts the Redis
// primary off from its replicas and the sentinels; the instances still
// reach every node. The cut-off primary stops taking writes within
// min-replicas-max-lag + 2 s (NOREPLICAS, which the instances answer
// service_unavailable), the sentinels promote a replica on the other side,
// both instances follow it, and service is back within Sentinel's
// failover-timeout + 2 s of the cut. After healing, the old primary
// rejoins as a replica of the new one. The checks every fault shares hold
// (failoverLoad.verify); listings the cut-off primary admitted after the cut are
// the ones a partition may lose (ADR 0007), counted.
func TestHASentinelPrimaryPartitioned(t *testing.T) {
	requireNetns(t) // root and nft, never skipped in CI
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Password: failoverPassword, OwnAddrs: true})
	d := startFailoverDeployment(t, top, ackedArgs...)
	ctx := context.Background()
	old, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldNode := top.Node(old)
	var others []string
	for _, s := range append(append([]*redistest.Server(nil), top.Nodes...), top.Sentinels...) {
		if s != oldNode {
			others = append(others, s.Host())
		}
	}
	l := startFailoverLoad(t, d)
	time.Sleep(1500 * time.Millisecond)

	p := cutPrimaryOff(t, oldNode.Host(), others)
	cut := time.Now()
	promotedc := make(chan string, 1)
	go func() {
		a, err := top.WaitForPromotion(ctx, old, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		promotedc <- a
	}()
	// The cut-off primary, still reachable from here, takes writes until
	// it counts no good replica.
	bound := top.Options.PartitionBound()
	var lastTaken, refusedAt time.Duration
	for i := 0; refusedAt == 0; i++ {
		_, err := top.Do(ctx, old, "SET", "ha-partition-probe", fmt.Sprint(i))
		switch {
		case err == nil:
			lastTaken = time.Since(cut)
		case strings.Contains(err.Error(), "NOREPLICAS"):
			refusedAt = time.Since(cut)
		default:
			t.Fatalf("a write on the cut-off primary: %v", err)
		}
		if time.Since(cut) > bound+10*time.Second {
			t.Fatalf("the cut-off primary still takes writes %v after the cut", time.Since(cut))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One second of slack: Redis re-counts good replicas once a second, on
	// a timer that runs late on a loaded machine.
	if lastTaken > bound+time.Second {
		t.Errorf("the cut-off primary took a write %v after the cut, beyond min-replicas-max-lag + 2 s = %v", lastTaken, bound)
	}
	promoted := <-promotedc
	if promoted == "" {
		t.FailNow()
	}
	l.waitServed(time.Now())
	time.Sleep(time.Second)

	p.heal()
	healed := time.Now()
	rejoined := waitReplicaOf(t, top, old, promoted)
	l.Halt()
	l.everyInstanceServes()

	recoveryBound := top.Options.FailoverTimeout + 2*time.Second
	// No loss window: what the cut-off primary took after the cut no
	// replica confirmed, so the instances answered it not_replicated.
	e, recovery := l.verify(failoverFault{at: cut, newPrimary: promoted}, failoverLimits())
	e.Scenario = "redis-primary-partitioned"
	e.Description = "nftables cut of the Redis primary from its replicas and sentinels under mixed load on two instances, acknowledged writes replicated (--redis-ack-replicas 1); healed after the promotion"
	e.SetTimes(recovery, recoveryBound)
	e.Log(t)
	t.Logf("cut-off primary: last write taken %v, NOREPLICAS %v after the cut (bound %v); healed -> replica of the new primary %v",
		lastTaken.Round(10*time.Millisecond), refusedAt.Round(10*time.Millisecond), bound, rejoined.Sub(healed).Round(10*time.Millisecond))
	if got := recovery; got > recoveryBound {
		t.Errorf("service back %v after the cut, beyond failover-timeout + 2 s = %v", got, recoveryBound)
	}
}

// waitReplicaOf waits (at most 30 s) until node addr is a replica of
// primary with its link up, and returns when it was.
func waitReplicaOf(t *testing.T, top *redistest.Topology, addr, primary string) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var info string
	for time.Now().Before(deadline) {
		m, err := top.Do(context.Background(), addr, "INFO", "replication")
		if err == nil {
			info, _ = m.ToString()
			host, port, _ := strings.Cut(primary, ":")
			if strings.Contains(info, "role:slave") && strings.Contains(info, "master_host:"+host+"\r\n") &&
				strings.Contains(info, "master_port:"+port+"\r\n") && strings.Contains(info, "master_link_status:up") {
				return time.Now()
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s is not a replica of %s 30 s after healing:\n%s", addr, primary, info)
	return time.Time{}
}
