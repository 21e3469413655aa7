//go:build linux

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// haLease is the instances' registration lease: the default, so the test
// shows the documented bounds.
const haLease = 3 * time.Second

// haDeployment is two instances, each in its own network namespace, on one
// redis-server in the test's namespace, with two tenants.
type haDeployment struct {
	lab      *nsLab
	srv      *redistest.Server
	port     string
	key      [32]byte
	insts    []*proc
	tenants  [2]haTenant
	opsToken string
}

func startHADeployment(t *testing.T) *haDeployment {
	t.Helper()
	requireNetns(t)
	redistest.SkipIfMissing(t)
	d := &haDeployment{lab: newNSLab(t, 2)}
	srv, err := redistest.StartWith("--bind", "127.0.0.1 "+strings.Join(d.lab.Gateways(), " "), "--protected-mode", "no")
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	d.srv = srv
	d.port = srv.Addr[strings.LastIndexByte(srv.Addr, ':')+1:]
	for i := range d.key {
		d.key[i] = 0x5a
	}
	keyFile := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	var principals string
	principals, d.tenants, d.opsToken = haPrincipals(t)
	for i := 1; i <= 2; i++ {
		addr := d.lab.Addr(i)
		d.insts = append(d.insts, startProcWrapped(t, d.lab.Exec(i), "--http-addr", addr+":8080", "--udp-addr", addr+":3478",
			"--store", "redis", "--redis-addr", d.lab.gateway(i)+":"+d.port, "--redis-name", "ha",
			"--capability-key-file", keyFile, "--principals", principals,
			"--instance-lease", haLease.String()))
	}
	return d
}

// cutFromRedis partitions instance i (1-based) from redis-server, both ways.
func (d *haDeployment) cutFromRedis(i int) {
	gw := d.lab.gateway(i)
	d.lab.Cut(i, "ip daddr "+gw+" tcp dport "+d.port, "ip saddr "+gw+" tcp sport "+d.port)
}

// checkInvariants runs the store's invariant checker against the Redis.
func (d *haDeployment) checkInvariants(t *testing.T) {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{d.srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "ha", Limits: engine.DefaultLimits(),
		Keyring: engine.NewKeyring(d.key)})
	if err != nil {
		t.Fatalf("opening the store to check it: %v", err)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Errorf("the store's invariants after the fault: %v", err)
	}
}

// readyzStatus is instance p's /readyz status, 0 when it does not answer.
func readyzStatus(p *proc) int {
	c := &http.Client{Timeout: answerBound}
	resp, err := c.Get("http://" + p.httpAddr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHAInstancePartitionedFromRedis cuts instance a (of a and b) from
// Redis (nftables drops both ways in a's namespace) for longer than its
// lease, under a mixed load of two tenants on both instances. a must fail
// closed before its lease can have expired in Redis (3/4 of the lease after
// the cut at the earliest: it renews every quarter): /readyz 503, and no
// request started 2/3 of the lease after the cut succeeds on it (HTTP
// 503 service_unavailable, signed STUN 503, or no answer); b serves
// throughout without a single service_unavailable. Healed, a registers
// again under a new epoch and serves. After the fault: no pool above its
// ceiling on either instance, the invariant checker passes on the Redis,
// no attempt introduced twice, no cross-tenant read, no admitted listing
// lost.
func TestHAInstancePartitionedFromRedis(t *testing.T) {
	d := startHADeployment(t)
	a, b := d.insts[0], d.insts[1]
	oldEpoch := epochOf(t, a)
	var cutAt, healAt atomic.Int64
	rule := func(inst int, start time.Time, outcome string) string {
		cut, heal := cutAt.Load(), healAt.Load()
		fenced := cut != 0 && start.UnixNano() > cut+int64(haLease*2/3) && (heal == 0 || start.UnixNano() < heal)
		switch {
		case inst == 0 && fenced && outcome == "success":
			return "the partitioned instance committed past two thirds of its lease"
		case inst == 1 && (outcome == "service_unavailable" || outcome == "none"):
			return "the instance still reaching Redis stopped serving"
		}
		return ""
	}
	l := newHALoad(t, d.insts, d.tenants, rule)
	defer l.finish()
	l.seed(2)
	l.start()
	time.Sleep(time.Second)

	cut := time.Now()
	cutAt.Store(cut.UnixNano())
	d.cutFromRedis(1)
	var failedClosed time.Duration
	for {
		sent := time.Now()
		if readyzStatus(a) == http.StatusServiceUnavailable {
			failedClosed = sent.Sub(cut)
			break
		}
		if time.Since(cut) > haLease+answerBound {
			t.Fatalf("/readyz of the partitioned instance never answered 503")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if failedClosed > haLease*3/4 {
		t.Errorf("the partitioned instance's /readyz answered 503 to a probe sent %v after the cut; its lease could expire in Redis %v after it", failedClosed, haLease*3/4)
	}
	time.Sleep(time.Until(cut.Add(haLease + time.Second))) // its registration has expired in Redis

	// A fresh host socket's refresh to a: a signed 503, never a success.
	h := &host{pub: l.admitted[0]}
	h.presence, h.cap = mustHandle(t, h.pub.Presence.Handle), mustToken(t, h.pub.Presence.Token)
	h.peer, h.seq = newPeerAt(t, a.mediator, facing(a.mediator)), 1<<30
	tx := h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	if m := readAnswer(h.peer, make([]byte, 2048), tx, answerBound); m == nil || stunOutcome(m, &h.cap) != "service_unavailable" {
		t.Errorf("a refresh to the partitioned instance: %v, want a signed 503", m)
	}

	heal := time.Now()
	healAt.Store(heal.UnixNano())
	d.lab.Heal(1)
	var recovery time.Duration
	for i := 0; ; i++ {
		sent := time.Now()
		out, _ := l.do(0, "POST", "/v1/listings", d.tenants[0].publisher, listingBody("after the partition"),
			"Idempotency-Key", fmt.Sprintf("ha-probe-%d", i))
		if out == "success" {
			recovery = sent.Sub(heal)
			break
		}
		if time.Since(heal) > 20*time.Second {
			t.Fatalf("the healed instance still answers %s %v after the partition ended", out, time.Since(heal))
		}
		time.Sleep(50 * time.Millisecond)
	}
	again := a.waitLogLine("instance registered again")
	if e, _ := again["epoch"].(string); e == "" || mustAtoi(t, e) <= oldEpoch {
		t.Errorf("re-registration %v, want an epoch above %d", again, oldEpoch)
	}
	time.Sleep(time.Second) // load on the healed deployment
	l.finish()

	breaches := l.checkPools(d.opsToken)
	d.checkInvariants(t)
	lost := l.lostAdmitted(1)
	const bound = haLease + redisstore.DefaultTimeout
	l.evidence("instance-redis-partition",
		"one of two instances cut from Redis (nftables, both ways) past its lease under mixed two-tenant load, then healed",
		recovery, bound, lost, breaches)
	t.Logf("fail-closed: /readyz 503 %v after the cut; serving again %v after the heal", failedClosed.Round(time.Millisecond), recovery.Round(time.Millisecond))
	for _, want := range []string{"success", "service_unavailable", "introduced"} {
		if l.answers[want] == 0 {
			t.Errorf("no %q answer: the load did not cover the fault (answers %v)", want, l.answers)
		}
	}
	if n := l.doubleIntroductions(); n != 0 {
		t.Errorf("%d attempt sides introduced twice", n)
	}
	if recovery > bound {
		t.Errorf("the healed instance served again %v after the partition ended, bound %v", recovery, bound)
	}
	_ = b
}

// subscriberRe finds a pub/sub connection's local port in CLIENT LIST.
var subscriberRe = regexp.MustCompile(`addr=([0-9.]+):(\d+) .*\bsub=([1-9]\d*)`)

// subscriberPort is the local port of instance i's pub/sub connection (its
// forwarding channel), as redis-server sees it.
func (d *haDeployment) subscriberPort(t *testing.T, i int) string {
	t.Helper()
	list, err := redisCmd(t, d.srv, "CLIENT", "LIST").ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		if m := subscriberRe.FindStringSubmatch(line); m != nil && m[1] == d.lab.Addr(i) {
			return m[2]
		}
	}
	t.Fatalf("instance %d has no subscribed connection:\n%s", i, list)
	return ""
}
