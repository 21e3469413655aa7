package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Several rendezvous processes on one real redis-server: the instance
// registry, fencing, routing and per-instance drain.

// redisCmd runs one command on srv (the test's own connection).
func redisCmd(t *testing.T, srv *redistest.Server, args ...string) rueidis.RedisResult {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.Do(context.Background(), c.B().Arbitrary(args...).Build())
}

// publishRouted publishes through p and starts presence at the mediator
// the answer names, which with several instances may be another's.
func publishRouted(t *testing.T, p *proc, key string) *host {
	t.Helper()
	h := &host{pub: p.publish(key, "Routed host")}
	h.presence = mustHandle(t, h.pub.Presence.Handle)
	h.cap = mustToken(t, h.pub.Presence.Token)
	h.peer = newPeer(t, h.pub.Presence.Mediator)
	h.refresh()
	return h
}

// epochOf reads the fencing epoch p logged at start.
func epochOf(t *testing.T, p *proc) int64 {
	t.Helper()
	l := p.logged("redis store")
	e, ok := l["epoch"].(float64)
	if !ok || e < 1 {
		t.Fatalf("the redis store line names no epoch: %v", l)
	}
	return int64(e)
}

// rawPost sends a publish without the test's helpers (which fail the test
// from the calling goroutine): the status and problem code, or err.
func rawPost(addr, token, key string) (status int, code string, err error) {
	b, _ := json.Marshal(listingBody("paused"))
	req, _ := http.NewRequest("POST", "http://"+addr+"/v1/listings", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var pr struct{ Code string }
	_ = json.Unmarshal(body, &pr)
	return resp.StatusCode, pr.Code, nil
}

// TestE2EPausedInstanceCommitsNothing: an instance stopped (SIGSTOP) past
// its lease and continued (SIGCONT) answers every request typed 503
// service_unavailable (readiness 503 too) and commits none of them, the
// ones sent while it was stopped included, and answers a presence refresh
// with a signed 503, until it has registered again with a new epoch; then
// it serves again. The other instance serves throughout. Redis is paused
// for writes (CLIENT PAUSE) across the continue, so the paused instance
// cannot re-register before its answers are judged.
func TestE2EPausedInstanceCommitsNothing(t *testing.T) {
	srv, args := redisServerArgs(t)
	args = append(args, "--instance-lease", "1s")
	a, b := startProc(t, args...), startProc(t, args...)
	oldEpoch := epochOf(t, a)
	h := publishRouted(t, a, "paused-before")
	pools := b.pools()

	a.signal(syscall.SIGSTOP)
	stopped := true
	defer func() {
		if stopped {
			a.signal(syscall.SIGCONT)
		}
	}()
	time.Sleep(2 * time.Second) // past the lease (1s) in Redis
	type answer struct {
		status int
		code   string
		err    error
	}
	const queued = 4
	answers := make(chan answer, queued)
	for i := range queued { // sent while stopped: answered after SIGCONT
		go func() {
			s, c, err := rawPost(a.httpAddr, a.tokens["publisher"], "paused-queued-"+strconv.Itoa(i))
			answers <- answer{s, c, err}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	if err := redisCmd(t, srv, "CLIENT", "PAUSE", "10000", "WRITE").Error(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	a.signal(syscall.SIGCONT)
	stopped = false
	for range queued {
		an := <-answers
		if an.err != nil || an.status != http.StatusServiceUnavailable || an.code != "service_unavailable" {
			t.Fatalf("a publish queued while the instance was stopped: %d %q %v, want 503 service_unavailable", an.status, an.code, an.err)
		}
	}
	if r := a.call("GET", "/readyz", "", nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("/readyz after SIGCONT: %d %s, want 503", r.status, r.body)
	}
	r := a.call("POST", "/v1/listings", a.tokens["publisher"], listingBody("late"), "Idempotency-Key", "paused-after")
	if r.status != http.StatusServiceUnavailable || r.problemCode(t) != "service_unavailable" {
		t.Fatalf("a publish after SIGCONT: %d %s, want 503 service_unavailable", r.status, r.body)
	}
	// A presence refresh sent to the fenced instance: a signed 503.
	h.peer = newPeer(t, a.mediator)
	h.seq++
	h.peer.request(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	if m := h.peer.read(); m.Type() != stun.BindingError || !m.CheckIntegrity(h.cap[:]) {
		t.Fatalf("a refresh to the fenced instance answered type %#x (signed %v), want a signed error", m.Type(), m.CheckIntegrity(h.cap[:]))
	} else if code, _, _ := m.ErrorCode(); code != 503 {
		t.Fatalf("a refresh to the fenced instance answered %d, want 503", code)
	}
	if err := redisCmd(t, srv, "CLIENT", "UNPAUSE").Error(); err != nil {
		t.Fatalf("CLIENT UNPAUSE: %v", err)
	}
	if got := b.pools(); got != pools {
		t.Fatalf("the paused instance's refused requests changed the pools:\nbefore %s\nafter  %s", pools, got)
	}

	a.waitReadiness(http.StatusOK)
	again := a.waitLogLine("instance registered again")
	if e, _ := again["epoch"].(string); e == "" || mustAtoi(t, e) <= oldEpoch {
		t.Fatalf("re-registration %v, want an epoch above %d", again, oldEpoch)
	}
	a.publish("paused-rejoined", "Rejoined")
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// TestE2EInstancesRouteListingsAndShareStats: with three instances, new
// listings published through one are spread over all three mediators
// (rendezvous hashing over live instances); a join attempt's mediator is
// the one the host's presence last reached, wherever the join is made;
// every instance's /v1/admin/stats shows the same, deployment-wide pools.
func TestE2EInstancesRouteListingsAndShareStats(t *testing.T) {
	args := append(redisStoreArgs(t), "--instance-lease", "1s")
	a, b, c := startProc(t, args...), startProc(t, args...), startProc(t, args...)
	procs := map[string]*proc{a.mediator: a, b.mediator: b, c.mediator: c}
	time.Sleep(time.Second) // every instance renews (each 250 ms) and learns of the others

	routed := map[string]*host{}
	for i := 0; i < 60 && len(routed) < 3; i++ {
		pub := a.publish("route-"+strconv.Itoa(i), "Routed")
		if procs[pub.Presence.Mediator] == nil {
			t.Fatalf("listing routed to %q, not one of the instances", pub.Presence.Mediator)
		}
		if routed[pub.Presence.Mediator] == nil {
			h := &host{pub: pub, presence: mustHandle(t, pub.Presence.Handle), cap: mustToken(t, pub.Presence.Token)}
			h.peer = newPeer(t, pub.Presence.Mediator)
			h.refresh()
			routed[pub.Presence.Mediator] = h
		}
	}
	if len(routed) != 3 {
		t.Fatalf("60 listings published through one instance went to %d mediators, want all 3", len(routed))
	}

	// The host of the listing routed to b: its attempts name b, until its
	// presence arrives at c instead.
	h := routed[b.mediator]
	if j := c.join("route-join-1", h.pub.ListingID); j.Mediator != b.mediator {
		t.Fatalf("join through c names mediator %s, want b's %s where the presence is", j.Mediator, b.mediator)
	}
	h.peer = newPeer(t, c.mediator)
	h.refresh()
	if j := a.join("route-join-2", h.pub.ListingID); j.Mediator != c.mediator {
		t.Fatalf("join through a after presence moved names %s, want c's %s", j.Mediator, c.mediator)
	}

	pa, pb, pc := a.pools(), b.pools(), c.pools()
	if pa != pb || pb != pc {
		t.Fatalf("instances disagree on the deployment's pools:\na %s\nb %s\nc %s", pa, pb, pc)
	}
	var st struct {
		Pools map[string]struct{ Used int } `json:"pools"`
	}
	c.freshStats(t, statsToken(c.tokens), &st)
	if st.Pools["attempts"].Used != 2 || st.Pools["listings"].Used < 3 {
		t.Fatalf("stats on c: %+v, want the 2 attempts and every listing made through a", st.Pools)
	}
}

// TestE2ESIGTERMDrainsOnlyThatInstance: SIGTERM drains the instance that
// gets it: it refuses new work (503 draining, readiness 503), no new
// listing is routed to it, the attempt in flight through it completes,
// then it exits 0; the other instance keeps serving and the shared state
// (the drained instance's listing) survives.
func TestE2ESIGTERMDrainsOnlyThatInstance(t *testing.T) {
	args := append(redisStoreArgs(t), "--instance-lease", "1s")
	a, b := startProc(t, args...), startProc(t, args...)
	time.Sleep(time.Second) // each learns of the other
	// A listing whose host is on a (OFFER leaves from the instance the join
	// reached: here the host's own).
	var h *host
	for i := 0; h == nil; i++ {
		if i == 40 {
			t.Fatal("40 listings and none routed to a")
		}
		if g := publishRouted(t, a, "drain-one-"+strconv.Itoa(i)); g.pub.Presence.Mediator == a.mediator {
			h = g
		}
	}
	j := a.join("drain-one-join", h.pub.ListingID)
	h.offered(mustHandle(t, j.Handle))

	a.signal(syscall.SIGTERM)
	a.waitReadiness(http.StatusServiceUnavailable)
	if r := a.call("POST", "/v1/listings", a.tokens["publisher"], listingBody("late"), "Idempotency-Key", "drain-one-late"); r.status != http.StatusServiceUnavailable || r.problemCode(t) != "draining" {
		t.Fatalf("publish on the draining instance: %d %s, want 503 draining", r.status, r.body)
	}
	if r := b.call("GET", "/readyz", "", nil); r.status != http.StatusOK {
		t.Fatalf("/readyz of the other instance: %d, want 200", r.status)
	}
	time.Sleep(600 * time.Millisecond) // b renews and learns of the drain
	for i := range 20 {
		if pub := b.publish("drain-one-b-"+strconv.Itoa(i), "Other"); pub.Presence.Mediator != b.mediator {
			t.Fatalf("a listing published while a drains was routed to %s, want b's %s", pub.Presence.Mediator, b.mediator)
		}
	}
	introduce(t, h, newPeer(t, j.Mediator), j)
	if code := a.wait(); code != 0 {
		t.Fatalf("the drained instance exited %d, want 0; log:\n%s", code, a.stderr.String())
	}
	if fin := a.logged("drain finished"); fin == nil || fin["scope"] != "instance" || fin["reason"] != "idle" {
		t.Fatalf("drain finished line %v, want scope instance, reason idle", fin)
	}
	b.call("GET", "/v1/listings/"+h.pub.ListingID, b.tokens["client"], nil).expect(t, "the drained instance's listing through b", http.StatusOK, nil)
	h.peer = newPeer(t, b.mediator)
	h.refresh()
	if r := b.call("GET", "/readyz", "", nil); r.status != http.StatusOK {
		t.Fatalf("/readyz of the other instance after the drain: %d, want 200", r.status)
	}
}

// TestE2EOperatorDrainDrainsTheDeployment: POST /v1/admin/drain on one
// instance drains the shared state: every instance refuses new work and
// reports draining, while both processes keep running.
func TestE2EOperatorDrainDrainsTheDeployment(t *testing.T) {
	args := redisStoreArgs(t)
	a, b := startProc(t, args...), startProc(t, args...)
	a.call("POST", "/v1/admin/drain", statsToken(a.tokens), nil).expect(t, "drain", http.StatusAccepted, nil)
	for _, p := range []*proc{a, b} {
		p.waitReadiness(http.StatusServiceUnavailable)
		if r := p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("late"), "Idempotency-Key", "op-drain"); r.status != http.StatusServiceUnavailable || r.problemCode(t) != "draining" {
			t.Fatalf("publish after the operator drain: %d %s, want 503 draining", r.status, r.body)
		}
		p.alive()
	}
}
