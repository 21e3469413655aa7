//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/haevidence"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// haTenant is one tenant's tokens in the principals file of haPrincipals.
type haTenant struct{ name, publisher, client string }

// haPrincipals writes a principals file of two tenants (game-a, game-b),
// each with a publisher and a client, and a global operator who reads the
// stats; it returns the file, the tenants and the operator's token.
func haPrincipals(t *testing.T) (string, [2]haTenant, string) {
	t.Helper()
	path, tok := e2e.WritePrincipals(t, map[string][3]string{
		"pub-a": {"game-a", "prod", "publisher"}, "cli-a": {"game-a", "prod", "client"},
		"pub-b": {"game-b", "prod", "publisher"}, "cli-b": {"game-b", "prod", "client"},
		"ops": {"*", "*", "operator"},
	})
	return path, [2]haTenant{{"a", tok["pub-a"], tok["cli-a"]}, {"b", tok["pub-b"], tok["cli-b"]}}, tok["ops"]
}

// haExpectedCodes are the problems the load may meet: its requests are
// well-formed, so anything else (internal_error, invalid_request, ...) is a
// failure, and an answer without a problem code is "untyped".
var haExpectedCodes = map[string]bool{
	"not_found": true, "conflict": true, "quota_exceeded": true, "capacity_exceeded": true,
	"draining": true, "service_unavailable": true, "expired": true,
}

// haRule judges one answer of instance inst (0-based) to a request started
// at start: "" if the scenario allows it, else why not.
type haRule func(inst int, start time.Time, outcome string) string

// haLoad is a concurrent mixed load of real clients on every instance, two
// tenants at once: HTTP publish, renew, get (own and the other tenant's
// listings), browse and join; UDP presence refreshes, host and client
// binds. It records every answer by typed outcome and every INTRODUCE by
// attempt and side.
type haLoad struct {
	t       *testing.T
	insts   []*proc
	tenants [2]haTenant
	rule    haRule
	http    *http.Client

	mu               sync.Mutex
	*haevidence.Load // runs the workers, counts the answers by typed outcome
	failures         []string
	owner            map[string]int  // listing ID → tenant index
	hosted           map[string]bool // listings whose host runs in the load (the joiners' targets)
	admitted         []published     // listings whose publish answered 201
	intros           map[string]map[string]bool
	// joinsIntroduced counts the joiners' attempts that reached INTRODUCE.
	joinsIntroduced int
	crossTenant     int
}

func newHALoad(t *testing.T, insts []*proc, tenants [2]haTenant, rule haRule) *haLoad {
	return &haLoad{t: t, insts: insts, tenants: tenants, rule: rule, Load: haevidence.NewLoad(),
		http:  &http.Client{Timeout: answerBound + time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		owner: map[string]int{}, hosted: map[string]bool{}, intros: map[string]map[string]bool{}}
}

func (l *haLoad) fail(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.failures) < 20 {
		l.failures = append(l.failures, fmt.Sprintf(format, a...))
	}
}

// record counts outcome and applies the scenario's rule.
func (l *haLoad) record(what string, inst int, start time.Time, outcome string) {
	l.Count(outcome)
	if outcome == "untyped" || strings.HasPrefix(outcome, "unexpected_") {
		l.fail("%s on instance %d: %s", what, inst, outcome)
	} else if why := l.rule(inst, start, outcome); why != "" {
		l.fail("%s on instance %d at %s: %s: %s", what, inst, start.Format("15:04:05.000"), outcome, why)
	}
}

// do sends one request to instance inst and returns the typed outcome
// ("success" for a 2xx) and the body.
func (l *haLoad) do(inst int, method, path, token string, body any, hdr ...string) (string, []byte) {
	req, err := e2e.NewRequest(method, "http://"+l.insts[inst].httpAddr+path, token, body, hdr...)
	if err != nil {
		return "untyped", []byte(err.Error())
	}
	resp, b, err := e2e.Exchange(l.http, req)
	if resp == nil {
		return "untyped", []byte(err.Error())
	}
	return httpOutcome(resp, b), b
}

// httpOutcome is "success" for a 2xx, the problem's code for a problem
// the load expects, "unexpected_<code>" for another, else "untyped".
func httpOutcome(resp *http.Response, body []byte) string {
	if resp.StatusCode/100 == 2 {
		return "success"
	}
	code := e2e.ProblemCode(resp.Header, body)
	if code == "" {
		return "untyped"
	}
	if !haExpectedCodes[code] {
		return "unexpected_" + code
	}
	return code
}

// seed publishes, through instance 0, hostsPerTenant listings per tenant
// and starts each one's host (presence at the mediator its listing names).
func (l *haLoad) seed(hostsPerTenant int) {
	for ti, tn := range l.tenants {
		for i := 0; i < hostsPerTenant; i++ {
			var pub published
			l.insts[0].call("POST", "/v1/listings", tn.publisher, listingBody("ha "+tn.name), "Idempotency-Key",
				fmt.Sprintf("ha-seed-%s-%d", tn.name, i)).expect(l.t, "seed publish", http.StatusCreated, &pub)
			l.mu.Lock()
			l.owner[pub.ListingID], l.hosted[pub.ListingID] = ti, true
			l.admitted = append(l.admitted, pub)
			l.mu.Unlock()
			inst := l.instOf(pub.Presence.Mediator)
			if inst < 0 {
				l.t.Fatalf("publish named mediator %s, no instance's", pub.Presence.Mediator)
			}
			h := &host{pub: pub, presence: mustHandle(l.t, pub.Presence.Handle), cap: mustToken(l.t, pub.Presence.Token)}
			h.peer = newPeerAt(l.t, pub.Presence.Mediator, facing(pub.Presence.Mediator))
			h.refresh()
			l.Go(func() { l.hostWorker(h, inst) })
		}
	}
}

// facing is the test's address facing the instance whose mediator is
// mediator (nsLab: 10.n.i.1 faces 10.n.i.2), the source the instance sees.
func facing(mediator string) string {
	a := netip.MustParseAddrPort(mediator).Addr().As4()
	a[3] = 1
	return netip.AddrFrom4(a).String()
}

// instOf is the index of the instance whose mediator is addr, or -1.
func (l *haLoad) instOf(mediator string) int {
	for i, p := range l.insts {
		if p.mediator == mediator {
			return i
		}
	}
	return -1
}

// start runs the HTTP workers (one per tenant and instance) and the
// joiners (one per tenant).
func (l *haLoad) start() {
	for ti := range l.tenants {
		for inst := range l.insts {
			l.Go(func() { l.httpWorker(ti, inst) })
		}
		l.Go(func() { l.joiner(ti) })
	}
}

// finish stops the load and fails the test with what it judged wrong.
func (l *haLoad) finish() {
	l.Halt()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.failures {
		l.t.Error(f)
	}
	l.failures = nil // reported once, though finish is also deferred
}

// listingsOf returns the IDs of tenant ti's and of the other tenant's
// listings; hosted keeps only those whose host runs in the load.
func (l *haLoad) listingsOf(ti int, hosted bool) (own, other []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, o := range l.owner {
		if hosted && !l.hosted[id] {
			continue
		}
		if o == ti {
			own = append(own, id)
		} else {
			other = append(other, id)
		}
	}
	return own, other
}

// httpWorker publishes (a few listings, then only renews them), renews,
// gets its own and the other tenant's listings, and browses, through
// instance inst. A get or browse answering another tenant's listing is a
// cross-tenant read.
func (l *haLoad) httpWorker(ti, inst int) {
	tn := l.tenants[ti]
	var mine []published
	versions := map[string]uint64{}
	for i := 0; !l.Stopped(); i++ {
		_, other := l.listingsOf(ti, false)
		start := time.Now()
		switch i % 5 {
		case 0:
			if len(mine) >= 4 {
				continue
			}
			out, body := l.do(inst, "POST", "/v1/listings", tn.publisher, listingBody("ha load "+tn.name),
				"Idempotency-Key", fmt.Sprintf("ha-load-%s-%d-%d", tn.name, inst, i))
			l.record("publish", inst, start, out)
			var pub published
			if out == "success" && json.Unmarshal(body, &pub) == nil {
				mine = append(mine, pub)
				versions[pub.ListingID] = pub.Lease.Version
				l.mu.Lock()
				l.owner[pub.ListingID] = ti
				l.admitted = append(l.admitted, pub)
				l.mu.Unlock()
			}
		case 1:
			if len(mine) == 0 {
				continue
			}
			pub := mine[i%len(mine)]
			out, body := l.do(inst, "PUT", "/v1/listings/"+pub.ListingID+"/lease", tn.publisher,
				map[string]any{"lease_id": pub.Lease.LeaseID, "lease_token": pub.Lease.Token, "expected_version": versions[pub.ListingID]})
			l.record("renew", inst, start, out)
			var r struct{ Version uint64 }
			if out == "success" && json.Unmarshal(body, &r) == nil {
				versions[pub.ListingID] = r.Version
			}
		case 2: // a listing with a host (one without presence is not found)
			hosted, _ := l.listingsOf(ti, true)
			out, _ := l.do(inst, "GET", "/v1/listings/"+hosted[i%len(hosted)], tn.client, nil)
			l.record("get", inst, start, out)
		case 3:
			out, _ := l.do(inst, "GET", "/v1/listings/"+other[i%len(other)], tn.client, nil)
			if out == "success" {
				l.mu.Lock()
				l.crossTenant++
				l.mu.Unlock()
				l.fail("tenant %s read another tenant's listing through instance %d", tn.name, inst)
			}
			l.record("get other tenant's", inst, start, out)
		case 4:
			out, body := l.do(inst, "GET", "/v1/listings?protocol_version=7&limit=100", tn.client, nil)
			l.record("browse", inst, start, out)
			var page browsePage
			if out == "success" && json.Unmarshal(body, &page) == nil {
				l.mu.Lock()
				for _, it := range page.Items {
					if o, ok := l.owner[it.ListingID]; ok && o != ti {
						l.crossTenant++
						l.failures = append(l.failures, fmt.Sprintf("tenant %s browsed another tenant's listing", tn.name))
					}
				}
				l.mu.Unlock()
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stunOutcome types one answer to a signed request: "success", a signed
// error by code ("service_unavailable" for 503), or "untyped" (unsigned).
func stunOutcome(m *stun.Message, key *engine.Capability) string {
	switch {
	case !m.CheckIntegrity(key[:]):
		return "untyped"
	case m.Type() == stun.BindingSuccess:
		return "success"
	}
	code, _, _ := m.ErrorCode()
	if code == 503 {
		return "service_unavailable"
	}
	return fmt.Sprintf("stun_%d", code)
}

// introduced records one INTRODUCE for attempt a's side; the same datagram
// again (a retransmission's answer) is the same introduction, another one
// is a second introduction.
func (l *haLoad) introduced(a engine.Handle, side byte, datagram []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := fmt.Sprintf("%v/%c", a, side)
	if l.intros[k] == nil {
		l.intros[k] = map[string]bool{}
	}
	l.intros[k][string(datagram)] = true
}

// doubleIntroductions counts attempt sides introduced more than once.
func (l *haLoad) doubleIntroductions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, d := range l.intros {
		if len(d) > 1 {
			n++
		}
	}
	return n
}

// hostWorker refreshes h's presence at instance inst every 200 ms and
// binds the host side of every attempt an OFFER or a refresh answer names
// (again with each refresh until introduced, as the SDK retransmits).
func (l *haLoad) hostWorker(h *host, inst int) {
	pending := map[engine.Handle]time.Time{} // attempt → first seen
	buf := make([]byte, 2048)
	for !l.Stopped() {
		h.seq++
		msg, tx, err := signedRequest(stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
		if err != nil {
			l.fail("building a refresh: %v", err)
			return
		}
		start := time.Now()
		_, _ = h.peer.conn.WriteToUDPAddrPort(msg, h.peer.server)
		for a, seen := range pending {
			if time.Since(seen) > 10*time.Second {
				delete(pending, a)
				continue
			}
			hc := engine.HostAttemptCapability(&h.cap, a)
			if b, _, err := signedRequest(stun.KindAttemptHost, a, &hc, 0, hostLAN); err == nil {
				_, _ = h.peer.conn.WriteToUDPAddrPort(b, h.peer.server)
			}
		}
		answered := false
		deadline := time.Now().Add(answerBound)
		for !answered || time.Now().Before(start.Add(200*time.Millisecond)) {
			wait := start.Add(200 * time.Millisecond)
			if !answered {
				wait = deadline
			}
			_ = h.peer.conn.SetReadDeadline(wait)
			n, err := h.peer.conn.Read(buf)
			if err != nil {
				if !answered {
					l.record("refresh", inst, start, "none")
				}
				break
			}
			m := new(stun.Message)
			if stun.Parse(append([]byte(nil), buf[:n]...), m) != nil {
				l.fail("a malformed datagram to a host")
				continue
			}
			switch {
			case m.TransactionID() == tx:
				answered = true
				out := stunOutcome(m, &h.cap)
				l.record("refresh", inst, start, out)
				if a, ok := m.Attempt(); ok && out == "success" {
					if _, known := pending[a]; !known {
						pending[a] = time.Now()
					}
				}
			case m.Type() == stun.OfferIndication:
				if a, ok := m.Attempt(); ok && m.CheckIntegrity(h.cap[:]) {
					if _, known := pending[a]; !known {
						pending[a] = time.Now()
					}
				}
			case m.Type() == stun.IntroduceIndication:
				for a := range pending {
					hc := engine.HostAttemptCapability(&h.cap, a)
					if m.CheckIntegrity(hc[:]) {
						l.introduced(a, 'h', buf[:n])
						delete(pending, a)
					}
				}
			}
		}
	}
}

// joiner joins tenant ti's listings in turn through each instance in turn
// and binds the client side at the attempt's mediator from a fresh socket,
// retransmitting every 250 ms for at most 3 s, until introduced.
func (l *haLoad) joiner(ti int) {
	tn := l.tenants[ti]
	buf := make([]byte, 2048)
	for i := 0; !l.Stopped(); i++ {
		own, _ := l.listingsOf(ti, true)
		inst := i % len(l.insts)
		start := time.Now()
		out, body := l.do(inst, "POST", "/v1/listings/"+own[i%len(own)]+"/join-attempts", tn.client,
			map[string]any{"protocol_version": 7}, "Idempotency-Key", fmt.Sprintf("ha-join-%s-%d", tn.name, i))
		l.record("join", inst, start, out)
		var j joined
		if out != "success" || json.Unmarshal(body, &j) != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		// Not the must* helpers: they would end the test from this goroutine.
		u, okHandle := engine.ParseUUID(j.Handle)
		c, okToken := engine.ParseToken(j.Token)
		server, err := netip.ParseAddrPort(j.Mediator)
		bindInst := l.instOf(j.Mediator)
		if !okHandle || !okToken || err != nil || bindInst < 0 {
			l.fail("join answered a malformed attempt (mediator %q)", j.Mediator)
			continue
		}
		a := engine.Handle{UUID: u}
		conn, err := net.ListenUDP("udp4", nil)
		if err != nil {
			l.fail("cannot open a UDP socket: %v", err)
			return
		}
		introduced := false
		for try := 0; try < 12 && !introduced && !l.Stopped(); try++ {
			msg, tx, err := signedRequest(stun.KindAttemptClient, a, &c, 0, clientLAN)
			if err != nil {
				l.fail("building a bind: %v", err)
				break
			}
			start = time.Now()
			_, _ = conn.WriteToUDPAddrPort(msg, server)
			_ = conn.SetReadDeadline(time.Now().Add(250 * time.Millisecond))
			for {
				n, err := conn.Read(buf)
				if err != nil {
					break
				}
				m := new(stun.Message)
				if stun.Parse(append([]byte(nil), buf[:n]...), m) != nil {
					l.fail("a malformed datagram to a client")
					continue
				}
				if m.TransactionID() == tx {
					l.record("client bind", bindInst, start, stunOutcome(m, &c))
				} else if m.Type() == stun.IntroduceIndication && m.CheckIntegrity(c[:]) {
					l.introduced(a, 'c', buf[:n])
					introduced = true
				}
			}
		}
		conn.Close()
		if introduced {
			l.mu.Lock()
			l.joinsIntroduced++
			l.mu.Unlock()
		}
	}
}

// checkPools asks every instance for the deployment's pools and counts
// those above their ceiling.
func (l *haLoad) checkPools(opsToken string) (breaches int) {
	for i, p := range l.insts {
		var st statsPools
		p.call("GET", "/v1/admin/stats", opsToken, nil).expect(l.t, "stats", http.StatusOK, &st)
		if len(st.Pools) == 0 {
			l.t.Fatalf("instance %d's stats name no pools", i)
		}
		for _, o := range st.over() {
			breaches++
			l.t.Errorf("instance %d: pool above its ceiling: %s", i, o)
		}
	}
	return breaches
}

// lostAdmitted counts admitted listings whose lease no longer renews
// through instance inst (a lost listing answers not_found; a renewal
// conflict means it is there).
func (l *haLoad) lostAdmitted(inst int) int {
	lost := 0
	l.mu.Lock()
	admitted := append([]published(nil), l.admitted...)
	l.mu.Unlock()
	for _, pub := range admitted {
		tn := l.tenants[l.owner[pub.ListingID]]
		out, body := l.do(inst, "PUT", "/v1/listings/"+pub.ListingID+"/lease", tn.publisher,
			map[string]any{"lease_id": pub.Lease.LeaseID, "lease_token": pub.Lease.Token, "expected_version": pub.Lease.Version})
		if out != "success" && out != "conflict" {
			lost++
			l.t.Errorf("admitted listing %s lost: renew %s %s", pub.ListingID, out, body)
		}
	}
	return lost
}

// evidence logs the scenario's ha-evidence line (the load has stopped).
func (l *haLoad) evidence(scenario, description string, recovery, bound time.Duration, lost, breaches int) {
	l.t.Helper()
	e := haevidence.Record{Scenario: scenario, Description: description, Answers: l.Answers(),
		LostAdmitted: int64(lost), DoubleIntroductions: int64(l.doubleIntroductions()), CeilingBreaches: int64(breaches), CrossTenantReads: int64(l.crossTenant)}
	e.SetTimes(recovery, bound)
	e.Log(l.t)
}
