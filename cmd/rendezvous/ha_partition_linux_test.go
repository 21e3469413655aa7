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

// haDeployment is n instances, each in its own network namespace, on one
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

func startHADeployment(t *testing.T, n int) *haDeployment {
	t.Helper()
	requireNetns(t)
	redistest.SkipIfMissing(t)
	d := &haDeployment{lab: newNSLab(t, n)}
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
	for i := 1; i <= n; i++ {
		addr := d.lab.Addr(i)
		d.insts = append(d.insts, startProcWrapped(t, d.lab.Exec(i), "--http-addr", addr+":8080", "--udp-addr", addr+":3478",
			"--store", "redis", "--redis-addr", d.lab.gateway(i)+":"+d.port, "--redis-name", "ha",
			"--capability-key-file", keyFile, "--principals", principals,
			"--instance-lease", haLease.String()))
	}
	// Each instance learns the others at its next renewal (every quarter
	// of the lease): after it, routing spreads listings over all.
	time.Sleep(haLease/4 + 250*time.Millisecond)
	return d
}

// startLoad runs the deployment's HA load, judged by rule, on two listings
// per tenant; the test defers its finish.
func (d *haDeployment) startLoad(t *testing.T, rule haRule) *haLoad {
	t.Helper()
	l := newHALoad(t, d.insts, d.tenants, rule)
	l.seed(2)
	l.start()
	return l
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

// TestHAInstancePartitionedFromRedis cuts instance a (of three) from
// Redis (nftables drops both ways in a's namespace) for longer than its
// lease, under a mixed load of two tenants on both instances. a must fail
// closed before its lease can have expired in Redis (3/4 of the lease after
// the cut at the earliest: it renews every quarter): /readyz 503, and no
// request started 2/3 of the lease after the cut succeeds on it (HTTP
// 503 service_unavailable, signed STUN 503, or no answer); the others
// serve throughout without a single service_unavailable. Healed, a registers
// again under a new epoch and serves. After the fault: no pool above its
// ceiling on either instance, the invariant checker passes on the Redis,
// no attempt introduced twice, no cross-tenant read, no admitted listing
// lost.
func TestHAInstancePartitionedFromRedis(t *testing.T) {
	d := startHADeployment(t, 3)
	a := d.insts[0]
	oldEpoch := epochOf(t, a)
	var cutAt, healAt atomic.Int64
	rule := func(inst int, start time.Time, outcome string) string {
		cut, heal := cutAt.Load(), healAt.Load()
		fenced := cut != 0 && start.UnixNano() > cut+int64(haLease*2/3) && (heal == 0 || start.UnixNano() < heal)
		switch {
		case inst == 0 && fenced && outcome == "success":
			return "the partitioned instance committed past two thirds of its lease"
		case inst != 0 && (outcome == "service_unavailable" || outcome == "none"):
			return "an instance still reaching Redis stopped serving"
		}
		return ""
	}
	l := d.startLoad(t, rule)
	defer l.finish()
	time.Sleep(time.Second)

	cut := time.Now()
	cutAt.Store(cut.UnixNano())
	d.cutFromRedis(1)
	var failedClosed, answeredAfter time.Duration
	for {
		sent := time.Now()
		if readyzStatus(a) == http.StatusServiceUnavailable {
			failedClosed, answeredAfter = sent.Sub(cut), time.Since(cut)
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
	// Healed, the instance's next renewal (at most a quarter of the lease
	// later) is refused and it registers again; a call still waiting on a
	// connection the cut broke ends at the call deadline first.
	const bound = haLease + redisstore.DefaultTimeout
	l.evidence("instance-redis-partition",
		"one of three instances cut from Redis (nftables, both ways) past its lease under mixed two-tenant load, then healed",
		recovery, bound, lost, breaches)
	t.Logf("fail-closed: /readyz 503 to a probe sent %v after the cut (answered %v after it); serving again %v after the heal",
		failedClosed.Round(time.Millisecond), answeredAfter.Round(time.Millisecond), recovery.Round(time.Millisecond))
	for _, want := range []string{"success", "service_unavailable"} {
		if l.N(want) == 0 {
			t.Errorf("no %q answer: the load did not cover the fault (answers %v)", want, l.Answers())
		}
	}
	if l.joinsIntroduced == 0 {
		t.Error("no join of the load was introduced")
	}
	if n := l.doubleIntroductions(); n != 0 {
		t.Errorf("%d attempt sides introduced twice", n)
	}
	if recovery > bound {
		t.Errorf("the healed instance served again %v after the partition ended, bound %v", recovery, bound)
	}
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

// silent fails the test if u's socket receives a datagram of type typ
// within d (other datagrams are skipped).
func silent(t *testing.T, u *udpPeer, typ uint16, d time.Duration, what string) {
	t.Helper()
	buf := make([]byte, 2048)
	_ = u.conn.SetReadDeadline(time.Now().Add(d))
	for {
		n, from, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		m := new(stun.Message)
		if stun.Parse(append([]byte(nil), buf[:n]...), m) == nil && m.Type() == typ {
			t.Fatalf("%s arrived (from %v) although the forwarding path was cut", what, from)
		}
	}
}

// awaitIntroduce reads u's socket until the answer to tx (which must be a
// success signed with key) and an INTRODUCE signed with key have arrived.
func awaitIntroduce(t *testing.T, u *udpPeer, tx [12]byte, key *engine.Capability, l *haLoad, a engine.Handle, side byte) {
	t.Helper()
	buf := make([]byte, 2048)
	var answered, introduced bool
	_ = u.conn.SetReadDeadline(time.Now().Add(answerBound))
	for !answered || !introduced {
		n, err := u.conn.Read(buf)
		if err != nil {
			t.Fatalf("bind of side %c: answered %v, introduced %v: %v", side, answered, introduced, err)
		}
		m := new(stun.Message)
		if stun.Parse(append([]byte(nil), buf[:n]...), m) != nil {
			t.Fatal("a malformed datagram")
		}
		switch {
		case m.TransactionID() == tx:
			if out := stunOutcome(m, key); out != "success" {
				t.Fatalf("bind of side %c answered %s", side, out)
			}
			answered = true
		case m.Type() == stun.IntroduceIndication && m.CheckIntegrity(key[:]):
			l.introduced(a, side, buf[:n])
			introduced = true
		}
	}
}

// TestHAInstancePartitionedFromForwarding cuts instance b's pub/sub
// connection (the one its forwarding channel is subscribed on: nftables
// drops its segments both ways; Redis still counts b as a subscriber) under
// the mixed load, and shows what ADR 0006 says happens to the pushes
// forwarded to b: they are lost, and the protocol recovers them. A host
// whose presence reaches b, a client joining through a: the OFFER a
// forwards never arrives, and the host's next refresh answer names the
// attempt. The host binds at b, the client's bind at a completes the
// attempt: the host's INTRODUCE, forwarded by a, never arrives, and the
// host's bind retransmission to b is answered with it. Both instances
// serve throughout (the cut is on the forwarding only: no
// service_unavailable). Healed, forwarding works again: recovery is the
// time from the heal until a new join's OFFER reaches the host through b.
// Pushes Redis wrote on the cut connection are not lost but held by TCP:
// they arrive after the heal, late; a late INTRODUCE must be the same
// introduction the host already had.
func TestHAInstancePartitionedFromForwarding(t *testing.T) {
	d := startHADeployment(t, 2)
	a, b := d.insts[0], d.insts[1]
	rule := func(inst int, start time.Time, outcome string) string {
		if outcome == "service_unavailable" || outcome == "none" {
			return "an instance stopped serving, though only its forwarding was cut"
		}
		return ""
	}
	l := d.startLoad(t, rule)
	defer l.finish()

	// A host of tenant a whose listing names b, published through a.
	tn := d.tenants[0]
	var h *host
	for i := 0; h == nil; i++ {
		var pub published
		a.call("POST", "/v1/listings", tn.publisher, listingBody("forwarded host"), "Idempotency-Key", fmt.Sprintf("ha-fwd-%d", i)).
			expect(t, "publish", http.StatusCreated, &pub)
		l.mu.Lock()
		l.owner[pub.ListingID], l.admitted = 0, append(l.admitted, pub) // not hosted: the load does not join it
		l.mu.Unlock()
		if pub.Presence.Mediator == b.mediator {
			h = &host{pub: pub, presence: mustHandle(t, pub.Presence.Handle), cap: mustToken(t, pub.Presence.Token)}
			h.peer = newPeerAt(t, b.mediator, facing(b.mediator))
			h.refresh()
		} else if i == 20 {
			t.Fatalf("no listing of 20 routed to b (%s); the last to %s", b.mediator, pub.Presence.Mediator)
		}
	}
	join := func(key string) (joined, engine.Handle) {
		var j joined
		a.call("POST", "/v1/listings/"+h.pub.ListingID+"/join-attempts", tn.client, map[string]any{"protocol_version": 7},
			"Idempotency-Key", key).expect(t, "join", http.StatusCreated, &j)
		return j, mustHandle(t, j.Handle)
	}

	port := d.subscriberPort(t, 2)
	d.lab.Cut(2, "tcp sport "+port, "tcp dport "+port)
	time.Sleep(500 * time.Millisecond) // load across the cut

	j, attempt := join("ha-fwd-join-1")
	silent(t, h.peer, stun.OfferIndication, time.Second, "the OFFER forwarded to b")
	h.seq++
	tx := h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	if m := h.peer.expectResponse(tx, &h.cap); func() bool { got, ok := m.Attempt(); return !ok || got != attempt }() {
		t.Fatal("the host's refresh answer does not name the attempt whose OFFER was lost")
	}

	hostCap := engine.HostAttemptCapability(&h.cap, attempt)
	tx = h.peer.request(stun.KindAttemptHost, attempt, &hostCap, 0, hostLAN)
	h.peer.expectResponse(tx, &hostCap)
	clientCap := mustToken(t, j.Token)
	client := newPeerAt(t, a.mediator, facing(a.mediator))
	awaitIntroduce(t, client, client.request(stun.KindAttemptClient, attempt, &clientCap, 0, clientLAN), &clientCap, l, attempt, 'c')
	silent(t, h.peer, stun.IntroduceIndication, time.Second, "the host's INTRODUCE forwarded to b")
	awaitIntroduce(t, h.peer, h.peer.request(stun.KindAttemptHost, attempt, &hostCap, 0, hostLAN), &hostCap, l, attempt, 'h')

	heal := time.Now()
	d.lab.Heal(2)
	// Joins through a until one's OFFER reaches the host through b; an
	// OFFER of the attempt made during the cut arriving now is late.
	var recovery time.Duration
	late := 0
	buf := make([]byte, 2048)
	probes := map[engine.Handle]bool{}
	for i := 0; recovery == 0; i++ {
		if time.Since(heal) > 15*time.Second {
			t.Fatalf("no forwarded OFFER reached the host within %v of the heal", time.Since(heal))
		}
		if i%4 == 0 {
			_, p := join(fmt.Sprintf("ha-fwd-probe-%d", i))
			probes[p] = true
		}
		_ = h.peer.conn.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
		for {
			n, err := h.peer.conn.Read(buf)
			if err != nil {
				break
			}
			m := new(stun.Message)
			if stun.Parse(append([]byte(nil), buf[:n]...), m) != nil {
				continue
			}
			if m.Type() == stun.IntroduceIndication && m.CheckIntegrity(hostCap[:]) {
				l.introduced(attempt, 'h', buf[:n]) // held during the cut: must be the same introduction
				late++
			}
			if m.Type() != stun.OfferIndication {
				continue
			}
			if got, _ := m.Attempt(); probes[got] {
				recovery = time.Since(heal)
			} else if got == attempt {
				late++
			}
		}
	}
	time.Sleep(time.Second) // load on the healed deployment
	l.finish()

	breaches := l.checkPools(d.opsToken)
	d.checkInvariants(t)
	lost := l.lostAdmitted(1)
	// The subscription's connection resumes at TCP's next retransmission,
	// backed off during the cut (1.2 to 1.4 s after a 3 s cut here).
	const bound = 10 * time.Second
	l.evidence("instance-forwarding-partition",
		"one of two instances cut from its pub/sub forwarding connection (nftables, both ways) under mixed two-tenant load; lost pushes recovered by presence refresh and bind retransmission",
		recovery, bound, lost, breaches)
	t.Logf("forwarding back %v after the heal; %d pushes held during the cut arrived late", recovery.Round(time.Millisecond), late)
	if n := l.doubleIntroductions(); n != 0 {
		t.Errorf("%d attempt sides introduced twice", n)
	}
	if l.joinsIntroduced == 0 {
		t.Error("no join of the load was introduced")
	}
	if recovery > bound {
		t.Errorf("forwarding to the healed instance came back %v after the heal, bound %v", recovery, bound)
	}
}
