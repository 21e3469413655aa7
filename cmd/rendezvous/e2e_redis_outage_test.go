package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/haevidence"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// Phases of the outage test, in order; every answer is judged by the phases
// its request started and ended in.
const (
	phaseHealthy   int32 = iota
	phaseKilled          // redis-server got SIGKILL
	phaseDown            // /readyz said unavailable: Redis is certainly gone
	phaseRestarted       // redis-server runs again
	phaseRecovered       // /readyz said ready again
)

// answerBound bounds every request during the outage: the store's call
// deadline plus room for a loaded 2-core machine. A request past it hangs.
const answerBound = redisstore.DefaultTimeout + 3*time.Second

// outageLoad is concurrent HTTP and UDP traffic on one server, judging
// every answer by phase.
type outageLoad struct {
	p     *proc
	phase atomic.Int32
	stop  chan struct{}
	wg    sync.WaitGroup
	http  *http.Client

	mu       sync.Mutex
	failures []string
	failed   int         // answers that were not the typed one the phase allows
	admitted []published // listings whose publish answered 201
	counts   map[string]int
}

func (l *outageLoad) fail(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed++
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, a...))
	}
}

func (l *outageLoad) count(what string) {
	l.mu.Lock()
	l.counts[what]++
	l.mu.Unlock()
}

// judgeHTTP checks one HTTP answer: a success before the kill and after the
// recovery, a typed 503 service_unavailable problem while Redis is down,
// one or the other in between; never anything else, never a hang.
func (l *outageLoad) judgeHTTP(what string, from int32, status, okStatus int, hdr http.Header, body []byte, err error, took time.Duration) {
	to := l.phase.Load()
	if err != nil || took > answerBound {
		l.fail("%s (phases %d..%d): no answer in %v: %v", what, from, to, took, err)
		return
	}
	unavailable := status == http.StatusServiceUnavailable && hdr.Get("Retry-After") != "" &&
		strings.HasPrefix(hdr.Get("Content-Type"), "application/problem+json") &&
		bytes.Contains(body, []byte(`"code":"service_unavailable"`))
	switch {
	case status == okStatus && !mustBeDown(from, to):
		l.count(what + " ok")
	case unavailable && !mustBeUp(from, to):
		l.count(what + " 503")
	default:
		l.fail("%s (phases %d..%d): %d %s", what, from, to, status, body)
	}
}

// mustBeUp: a request that started and ended while Redis was certainly up.
func mustBeUp(from, to int32) bool {
	return from == phaseHealthy && to == phaseHealthy || from == phaseRecovered
}

// mustBeDown: a request that started and ended while Redis was certainly down.
func mustBeDown(from, to int32) bool { return from == phaseDown && to == phaseDown }

func (l *outageLoad) do(method, path, token string, body any, hdr ...string) (int, http.Header, []byte, error) {
	req, err := e2e.NewRequest(method, "http://"+l.p.httpAddr+path, token, body, hdr...)
	if err != nil {
		return 0, nil, nil, err
	}
	resp, b, err := e2e.Exchange(l.http, req)
	if resp == nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, err
}

// A worker publishes at most publishesPerWorker listings (under the owner's
// quota), one per publishEvery, so publishes span the whole run.
const (
	publishesPerWorker = 25
	publishEvery       = 150 * time.Millisecond
)

// httpWorker publishes, reads and browses in a loop.
func (l *outageLoad) httpWorker(w int, known []string) {
	defer l.wg.Done()
	nPublished, lastPublish := 0, time.Time{}
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		from, start := l.phase.Load(), time.Now()
		switch i % 3 {
		case 0:
			if nPublished >= publishesPerWorker || time.Since(lastPublish) < publishEvery {
				continue
			}
			nPublished, lastPublish = nPublished+1, time.Now()
			status, hdr, body, err := l.do("POST", "/v1/listings", l.p.tokens["publisher"], listingBody("load"),
				"Idempotency-Key", fmt.Sprintf("outage-load-%d-%d", w, i))
			l.judgeHTTP("publish", from, status, http.StatusCreated, hdr, body, err, time.Since(start))
			var pub published
			if status == http.StatusCreated && json.Unmarshal(body, &pub) == nil {
				l.mu.Lock()
				l.admitted = append(l.admitted, pub)
				l.mu.Unlock()
			}
		case 1:
			status, hdr, body, err := l.do("GET", "/v1/listings/"+known[i%len(known)], l.p.tokens["client"], nil)
			l.judgeHTTP("get", from, status, http.StatusOK, hdr, body, err, time.Since(start))
		case 2:
			status, hdr, body, err := l.do("GET", "/v1/listings?protocol_version=7&limit=20", l.p.tokens["client"], nil)
			l.judgeHTTP("browse", from, status, http.StatusOK, hdr, body, err, time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// presenceWorker refreshes h's presence in a loop: a signed success while
// Redis is up, a signed 503 or no answer while it is down; never an
// unsigned answer, never a success while it is down.
func (l *outageLoad) presenceWorker(h *host) {
	defer l.wg.Done()
	buf := make([]byte, 2048)
	for {
		select {
		case <-l.stop:
			return
		default:
		}
		h.seq++
		msg, tx, err := signedRequest(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
		if err != nil {
			l.fail("building a refresh: %v", err)
			return
		}
		from := l.phase.Load()
		if _, err := h.peer.conn.WriteToUDPAddrPort(msg, h.peer.server); err != nil {
			l.fail("sending a refresh: %v", err)
			return
		}
		m := readAnswer(h.peer, buf, tx, answerBound)
		to := l.phase.Load()
		switch {
		case m == nil:
			// No answer: allowed only while Redis is (or was just) down.
			if mustBeUp(from, to) {
				l.fail("refresh (phases %d..%d): no answer", from, to)
			} else {
				l.count("refresh none")
			}
		case !m.CheckIntegrity(h.cap[:]):
			code, _, _ := m.ErrorCode()
			l.fail("refresh (phases %d..%d): unsigned answer type %#x code %d", from, to, m.Type(), code)
		case m.Type() == stun.BindingSuccess:
			if mustBeDown(from, to) {
				l.fail("refresh succeeded while Redis was down")
			}
			l.count("refresh ok")
		default:
			code, _, _ := m.ErrorCode()
			if code != 503 || mustBeUp(from, to) {
				l.fail("refresh (phases %d..%d): error %d", from, to, code)
			}
			l.count("refresh 503")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readAnswer returns the mediator's answer to tx within d, skipping late
// answers to earlier transactions, or nil.
func readAnswer(u *udpPeer, buf []byte, tx [12]byte, d time.Duration) *stun.Message {
	deadline := time.Now().Add(d)
	for {
		if err := u.conn.SetReadDeadline(deadline); err != nil {
			return nil
		}
		n, _, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return nil
		}
		m := new(stun.Message)
		if stun.Parse(append([]byte(nil), buf[:n]...), m) != nil || m.TransactionID() != tx {
			continue
		}
		return m
	}
}

// TestHARedisKilledMidLoad (the redis-killed fault scenario) kills redis-server (SIGKILL; persistence on, as
// an operator runs it) under concurrent HTTP and UDP load on the real
// binary: while it is down every HTTP answer is a typed 503
// service_unavailable problem, every presence refresh a signed 503 or no
// answer, a host's attempt bind never an unsigned 401 (the attempt is not
// gone, only unreachable), /readyz 503 unavailable, and nothing hangs past
// the call deadline. Restarted on the same port and data directory, the
// server reconnects by itself: /readyz is ready again, every listing
// admitted before or during the load is still there, and new work succeeds.
// Its ha-evidence line counts every answer: a success, a typed 503, a
// refresh left unanswered while Redis was down, or one of the failures.
func TestHARedisKilledMidLoad(t *testing.T) {
	redistest.SkipIfMissing(t)
	srv, err := redistest.StartPersistent(t.TempDir())
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	p := startProc(t, redisArgsFor(t, srv)...)

	// A host with a pending join attempt, kept out of the load.
	bound := publishHost(t, p, "outage-bound", "Bound host")
	j := p.join("outage-join-1", bound.pub.ListingID)
	attempt := mustHandle(t, j.Handle)
	bound.offered(attempt)
	hostCap := engine.HostAttemptCapability(&bound.cap, attempt)

	l := &outageLoad{p: p, stop: make(chan struct{}), counts: map[string]int{},
		http: &http.Client{Timeout: answerBound + time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	var hosts []*host
	known := []string{bound.pub.ListingID}
	l.admitted = append(l.admitted, bound.pub)
	for i := 0; i < 6; i++ {
		h := publishHost(t, p, fmt.Sprintf("outage-%d", i), fmt.Sprintf("Outage host %d", i))
		hosts = append(hosts, h)
		known = append(known, h.pub.ListingID)
		l.admitted = append(l.admitted, h.pub)
	}
	for w := 0; w < 3; w++ {
		l.wg.Add(1)
		go l.httpWorker(w, known)
	}
	for _, h := range hosts {
		l.wg.Add(1)
		go l.presenceWorker(h)
	}
	stopLoad := func() {
		select {
		case <-l.stop:
		default:
			close(l.stop)
			l.wg.Wait()
		}
	}
	defer stopLoad()

	time.Sleep(time.Second) // healthy load
	l.phase.Store(phaseKilled)
	killed := time.Now()
	srv.Stop()
	waitReady(t, p, http.StatusServiceUnavailable, `{"status":"unavailable"}`)
	l.phase.Store(phaseDown)
	t.Logf("/readyz unavailable %v after the kill", time.Since(killed).Round(time.Millisecond))

	// A host's attempt bind: the attempt exists, Redis cannot say so; the
	// answer is a signed 503 or none, never the unsigned 401 that tells the
	// host its attempt is gone.
	// A plain Binding sent after it is answered after it (one source is
	// served in order), so its answer ends the wait for the bind's.
	tx := bound.peer.request(stun.KindAttemptHost, attempt, &hostCap, 0, hostLAN)
	plain := bound.peer.plainBinding()
	for m := bound.peer.read(); m.TransactionID() != plain; m = bound.peer.read() {
		code, _, _ := m.ErrorCode()
		if m.TransactionID() != tx || code != 503 || !m.CheckIntegrity(hostCap[:]) {
			t.Errorf("host attempt bind while Redis is down: type %#x code %d signed %v; want a signed 503 or no answer",
				m.Type(), code, m.CheckIntegrity(hostCap[:]))
		}
	}
	time.Sleep(2 * time.Second) // load against the dead Redis

	l.phase.Store(phaseRestarted)
	if err := srv.Restart(); err != nil {
		t.Fatalf("restarting redis-server: %v", err)
	}
	restarted := time.Now()
	waitReady(t, p, http.StatusOK, `{"status":"ready"}`)
	l.phase.Store(phaseRecovered)
	recovery := time.Since(restarted)
	t.Logf("/readyz ready %v after redis-server answered PING again", recovery.Round(time.Millisecond))
	time.Sleep(time.Second) // load after the recovery
	stopLoad()

	for _, f := range l.failures {
		t.Error(f)
	}
	t.Logf("answers: %v", l.counts)
	for _, what := range []string{"publish ok", "publish 503", "get ok", "get 503", "browse ok", "browse 503", "refresh ok", "refresh 503"} {
		if l.counts[what] == 0 {
			t.Errorf("no %q answer: the load did not cover the outage (answers %v)", what, l.counts)
		}
	}

	// Nothing admitted is lost: every listing whose publish answered 201
	// renews with the lease it was given (a listing whose presence never
	// ran is not visible to get or browse, but its lease is there).
	ev := haevidence.Record{Scenario: "redis-killed", Description: "redis-server (append-only file on) killed with SIGKILL under 3 HTTP and 6 presence workers on one instance, restarted 2 s later on its port and data; recovery: from redis-server answering again to /readyz ready",
		Answers: map[string]int64{"untyped": int64(l.failed)}}
	for what, n := range l.counts {
		switch {
		case strings.HasSuffix(what, " ok"):
			ev.Answers["success"] += int64(n)
		case strings.HasSuffix(what, " 503"):
			ev.Answers["service_unavailable"] += int64(n)
		case what == "refresh none":
			ev.Answers["no_answer_while_down"] += int64(n)
		}
	}
	for i, pub := range l.admitted {
		r := p.call("PUT", "/v1/listings/"+pub.ListingID+"/lease", p.tokens["publisher"],
			map[string]any{"lease_id": pub.Lease.LeaseID, "lease_token": pub.Lease.Token, "expected_version": pub.Lease.Version})
		if r.status != http.StatusOK {
			t.Errorf("listing %d of %d admitted is lost after the recovery: renew %d %s", i, len(l.admitted), r.status, r.body)
			ev.LostAdmitted++
		}
	}
	// The hosts whose presence ran are read and browsed.
	for _, id := range known {
		p.call("GET", "/v1/listings/"+id, p.tokens["client"], nil).expect(t, "get after the recovery", http.StatusOK, nil)
	}
	seen := map[string]bool{}
	for after := ""; ; {
		var page browsePage
		p.call("GET", "/v1/listings?protocol_version=7&limit=100"+after, p.tokens["client"], nil).
			expect(t, "browse after the recovery", http.StatusOK, &page)
		for _, it := range page.Items {
			seen[it.ListingID] = true
		}
		if page.NextAfter == nil {
			break
		}
		after = "&after=" + *page.NextAfter
	}
	for _, h := range append(hosts, bound) {
		if !seen[h.pub.ListingID] {
			t.Errorf("listing %s with fresh presence is not browsable after the recovery", h.pub.ListingID)
		}
	}

	stoppedServerAnswersInTime(t, p, srv, hosts[0])

	// New work: the attempt admitted before the kill introduces its peers,
	// and a new listing, presence and join go through.
	bound.peer = newPeer(t, p.mediator) // the old socket may hold late answers
	bound.seq = 1 << 20
	bound.refresh()
	introduce(t, bound, newPeer(t, p.mediator), j)
	h := publishHost(t, p, "outage-after", "After host")
	a := p.join("outage-join-2", h.pub.ListingID)
	h.offered(mustHandle(t, a.Handle))
	ev.CeilingBreaches = int64(ceilingBreaches(t, p))
	ev.SetTimes(recovery, 20*time.Second) // waitReady's bound
	ev.Log(t)
}

// waitReady polls /readyz until it answers status and body, for at most
// 20 s (a reconnect, the restarted server loading its append-only file);
// every answer must come within answerBound.
func waitReady(t *testing.T, p *proc, status int, body string) {
	t.Helper()
	c := &http.Client{Timeout: answerBound, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := c.Get("http://" + p.httpAddr + "/readyz")
		if err != nil {
			t.Fatalf("/readyz: %v", err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == status && string(b) == body {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still answers %d %s, want %d %s", resp.StatusCode, b, status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stoppedServerAnswersInTime stops redis-server (SIGSTOP: connections stay
// open, nothing is answered) and checks that concurrent HTTP requests, a
// presence refresh and /readyz each answer 503 within the call deadline
// (plus room), never hang; then resumes it and waits for readiness.
func stoppedServerAnswersInTime(t *testing.T, p *proc, srv *redistest.Server, h *host) {
	t.Helper()
	resume := srv.PauseInTest(t)
	l := &outageLoad{p: p, counts: map[string]int{},
		http: &http.Client{Timeout: answerBound + time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	l.phase.Store(phaseDown)
	var wg sync.WaitGroup
	for i, req := range []struct{ method, path, token string }{
		{"GET", "/v1/listings/" + h.pub.ListingID, p.tokens["client"]},
		{"GET", "/v1/listings?protocol_version=7", p.tokens["client"]},
		{"PUT", "/v1/listings/" + h.pub.ListingID + "/lease", p.tokens["publisher"]},
		{"POST", "/v1/listings", p.tokens["publisher"]},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var body any
			var hdr []string
			switch req.method {
			case "PUT":
				body = map[string]any{"lease_id": h.pub.Lease.LeaseID, "lease_token": h.pub.Lease.Token, "expected_version": 1}
			case "POST":
				body, hdr = listingBody("stopped"), []string{"Idempotency-Key", "outage-stopped"}
			}
			start := time.Now()
			status, header, b, err := l.do(req.method, req.path, req.token, body, hdr...)
			l.judgeHTTP(fmt.Sprintf("request %d on a stopped Redis", i), phaseDown, status, 0, header, b, err, time.Since(start))
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		resp, err := l.http.Get("http://" + p.httpAddr + "/readyz")
		if err != nil {
			l.fail("/readyz on a stopped Redis: %v", err)
			return
		}
		resp.Body.Close()
		if took := time.Since(start); resp.StatusCode != http.StatusServiceUnavailable || took > answerBound {
			l.fail("/readyz on a stopped Redis: %d after %v", resp.StatusCode, took)
		}
	}()
	h.seq++
	msg, tx, err := signedRequest(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
	if err != nil {
		t.Fatal(err)
	}
	h.peer = newPeer(t, p.mediator) // the load's socket may hold late answers
	h.peer.send(msg)
	if m := readAnswer(h.peer, make([]byte, 2048), tx, answerBound); m == nil {
		t.Errorf("a refresh on a stopped Redis got no answer within %v", answerBound)
	} else if code, _, _ := m.ErrorCode(); code != 503 || !m.CheckIntegrity(h.cap[:]) {
		t.Errorf("a refresh on a stopped Redis: code %d signed %v, want a signed 503", code, m.CheckIntegrity(h.cap[:]))
	}
	wg.Wait()
	for _, f := range l.failures {
		t.Error(f)
	}
	resume()
	waitReady(t, p, http.StatusOK, `{"status":"ready"}`)
}
