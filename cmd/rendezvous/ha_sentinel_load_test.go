package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/internal/e2e"
	"github.com/rendezvous/rendezvous/internal/haevidence"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// failoverTenant is one tenant of the Sentinel fault tests: its publisher's and
// client's tokens.
type failoverTenant struct{ pub, cli string }

// failoverDeployment is two instances of the binary on one Sentinel topology,
// with two tenants and a global operator in the principals file.
type failoverDeployment struct {
	top     *redistest.Topology
	insts   [2]*proc
	tenants [2]failoverTenant
	ops     string // the global operator's token
}

// failoverTenants are the two tenants of the load.
var failoverTenants = [2]engine.Tenant{{Game: "ha-a", Env: "prod"}, {Game: "ha-b", Env: "prod"}}

// failoverRedisName is the deployment's --redis-name (sentinelArgs').
const failoverRedisName = "e2e"

// failoverLimits are the instances' limits: the defaults, except that each
// publisher may hold every listing of the test (the load measures loss and
// safety, not quotas), and an attempt pool the load fills before the fault
// (attempts live 30 s), so the ceiling checks and the invariant checker
// see a full pool emptied by the promotion's voiding.
func failoverLimits() engine.Limits {
	l := engine.DefaultLimits()
	l.OwnerListingQuota, l.TenantListingQuota = 5000, 10000
	l.MaxAttempts, l.TenantAttemptQuota, l.SubjectAttemptQuota = 160, 100, 100
	return l
}

// startFailoverDeployment starts two instances through top's sentinels.
func startFailoverDeployment(t *testing.T, top *redistest.Topology, extra ...string) *failoverDeployment {
	t.Helper()
	a, b := failoverTenants[0], failoverTenants[1]
	path, tok := e2e.WritePrincipals(t, map[string][3]string{
		"pub-a": {a.Game, a.Env, "publisher"}, "cli-a": {a.Game, a.Env, "client"},
		"pub-b": {b.Game, b.Env, "publisher"}, "cli-b": {b.Game, b.Env, "client"},
		"ops": {"*", "*", "operator"},
	})
	lim := failoverLimits()
	args := append(sentinelArgs(t, top), "--principals", path,
		"--owner-listing-quota", fmt.Sprint(lim.OwnerListingQuota), "--tenant-listing-quota", fmt.Sprint(lim.TenantListingQuota),
		"--max-attempts", fmt.Sprint(lim.MaxAttempts), "--tenant-attempt-quota", fmt.Sprint(lim.TenantAttemptQuota),
		"--subject-attempt-quota", fmt.Sprint(lim.SubjectAttemptQuota))
	args = append(args, extra...)
	d := &failoverDeployment{top: top, ops: tok["ops"],
		tenants: [2]failoverTenant{{tok["pub-a"], tok["cli-a"]}, {tok["pub-b"], tok["cli-b"]}}}
	for i := range d.insts {
		d.insts[i] = startProc(t, args...)
	}
	return d
}

// failoverListing is a listing the load was told was created.
type failoverListing struct {
	tenant  int
	id      string
	started time.Time // when its create was sent
	at      time.Time // when it was answered
}

// failoverAttempt is a join attempt the load created; sock is its client's socket,
// where every INTRODUCE for it arrives.
type failoverAttempt struct {
	tenant   int
	handle   engine.Handle
	cap      engine.Capability
	mediator netip.AddrPort
	sock     *net.UDPConn
	at       time.Time
	intros   int // INTRODUCEs read on sock
}

// failoverLoad is the concurrent mixed load of real clients on a deployment:
// per tenant, workers that publish (HTTP), refresh presence (UDP), renew
// (HTTP), join (HTTP), bind both sides of the attempt (UDP) and read the
// other tenant's listing (HTTP, must be not_found). Every answer is
// counted by typed outcome.
type failoverLoad struct {
	t    *testing.T
	d    *failoverDeployment
	http *http.Client

	mu sync.Mutex
	// Load runs the workers and counts the answers by typed outcome, with
	// a sample of what was not typed ("untyped") and of typed answers
	// other than success, not_found, service_unavailable ("unusual").
	*haevidence.Load
	listings  []failoverListing
	attempts  []*failoverAttempt
	last      [2]string // each tenant's latest listing
	crossRead int
	breaches  []string
}

const failoverWorkersPerTenant = 2

func startFailoverLoad(t *testing.T, d *failoverDeployment) *failoverLoad {
	l := &failoverLoad{t: t, d: d, Load: haevidence.NewLoad(),
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	for ti := range d.tenants {
		for w := range failoverWorkersPerTenant {
			l.Go(func() { l.worker(ti, w) })
		}
	}
	l.Go(l.watchCeilings)
	return l
}

func (l *failoverLoad) count(outcome, what string) {
	l.Count(outcome)
	switch {
	case outcome == "untyped":
		l.Example("untyped", what, 8)
	case outcome != "success" && outcome != "not_found" && outcome != "service_unavailable":
		l.Example("unusual", outcome+": "+what, 8)
	}
}

// do sends one HTTP request and returns its typed outcome: "success" for
// the wanted 2xx status (its body decoded into out), the problem's code
// for an application/problem+json error, "untyped" for anything else
// (transport errors included: the instances never stop in these tests).
func (l *failoverLoad) do(p *proc, method, path, token string, body any, key string, want int, out any) string {
	var hdr []string
	if key != "" {
		hdr = []string{"Idempotency-Key", key}
	}
	req, err := e2e.NewRequest(method, "http://"+p.httpAddr+path, token, body, hdr...)
	if err != nil {
		l.count("untyped", err.Error())
		return "untyped"
	}
	resp, b, err := e2e.Exchange(l.http, req)
	if resp == nil {
		l.count("untyped", method+" "+path+": "+err.Error())
		return "untyped"
	}
	outcome := "untyped"
	switch {
	case resp.StatusCode == want:
		if out == nil || json.Unmarshal(b, out) == nil {
			outcome = "success"
		}
	case e2e.ProblemCode(resp.Header, b) != "":
		outcome = e2e.ProblemCode(resp.Header, b)
	}
	l.count(outcome, fmt.Sprintf("%s %s: %d %.160s", method, path, resp.StatusCode, b))
	return outcome
}

// failoverSTUNOutcomes names the STUN error codes by the outcome they carry.
var failoverSTUNOutcomes = map[int]string{
	stun.CodeBadRequest: "invalid_request", stun.CodeUnauthorized: "unauthorized", stun.CodeForbidden: "forbidden",
	stun.CodeNotFound: "not_found", stun.CodeConflict: "conflict", stun.CodeServiceUnavailable: "service_unavailable",
	stun.CodeInsufficientCap: "capacity_exceeded",
}

// bind sends one signed Binding request from sock and reads until its
// answer (and, for a client bind answered success, its INTRODUCE) arrives
// or 2 s pass. It returns the typed outcome and the INTRODUCEs read
// meanwhile. "no_answer" (nothing came) is counted apart, not as untyped:
// it is the contract's answer to a host bind whose attempt a shared store
// that does not answer cannot look up (docs/contracts/udp.md), and the
// unsigned 401 ("unauthorized") the one to a host bind whose attempt the
// promotion voided between key derivation and commit.
func (l *failoverLoad) bind(sock *net.UDPConn, to netip.AddrPort, kind byte, h engine.Handle, key *engine.Capability, seq uint64) (string, int) {
	msg, tx, err := signedRequest(kind, h, key, seq, hostLAN)
	if err != nil {
		l.count("untyped", err.Error())
		return "untyped", 0
	}
	if _, err := sock.WriteToUDPAddrPort(msg, to); err != nil {
		l.count("untyped", err.Error())
		return "untyped", 0
	}
	outcome, intros := "no_answer", 0
	deadline := time.Now().Add(2 * time.Second)
	buf := make([]byte, stun.MaxDatagram)
	for {
		if outcome != "no_answer" && (kind != stun.KindAttemptClient || outcome != "success" || intros > 0) {
			break
		}
		_ = sock.SetReadDeadline(deadline)
		n, _, err := sock.ReadFromUDPAddrPort(buf)
		if err != nil {
			break
		}
		m := new(stun.Message)
		if stun.Parse(buf[:n:n], m) != nil {
			l.count("untyped", "a malformed datagram")
			continue
		}
		switch {
		case m.Type() == stun.IntroduceIndication:
			intros++
		case m.TransactionID() != tx:
		case m.Type() == stun.BindingSuccess:
			outcome = "success"
		case m.Type() == stun.BindingError:
			code, _, _ := m.ErrorCode()
			if outcome = failoverSTUNOutcomes[code]; outcome == "" {
				outcome = "untyped"
			}
		default:
			outcome = "untyped"
		}
	}
	l.count(outcome, fmt.Sprintf("bind kind %c", kind))
	return outcome, intros
}

func (l *failoverLoad) worker(ti, w int) {
	tn := l.d.tenants[ti]
	for i := 0; !l.Stopped(); i++ {
		a, b := l.d.insts[i%2], l.d.insts[(i+1)%2]
		var pub published
		started := time.Now()
		if l.do(a, "POST", "/v1/listings", tn.pub, listingBody("ha"), fmt.Sprintf("t%d-w%d-%d", ti, w, i), http.StatusCreated, &pub) == "success" {
			l.mu.Lock()
			l.listings = append(l.listings, failoverListing{ti, pub.ListingID, started, time.Now()})
			l.last[ti] = pub.ListingID
			l.mu.Unlock()
			l.publishedRound(ti, w, i, b, pub)
		}
		l.mu.Lock()
		other := l.last[1-ti]
		l.mu.Unlock()
		if other != "" {
			// The other tenant's listing is not there for this client.
			if o := l.do(b, "GET", "/v1/listings/"+other, tn.cli, nil, "", http.StatusOK, nil); o == "success" {
				l.mu.Lock()
				l.crossRead++
				l.mu.Unlock()
			}
		}
		time.Sleep(20 * time.Millisecond) // a bounded rate
	}
}

// publishedRound refreshes the new listing's presence, renews it through
// the other instance, joins it and binds both sides of the attempt.
func (l *failoverLoad) publishedRound(ti, w, i int, b *proc, pub published) {
	tn := l.d.tenants[ti]
	mediator, err := netip.ParseAddrPort(pub.Presence.Mediator)
	if err != nil {
		l.count("untyped", "mediator "+pub.Presence.Mediator)
		return
	}
	hostSock, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		l.t.Errorf("a UDP socket: %v", err)
		return
	}
	defer hostSock.Close()
	hu, ok1 := engine.ParseUUID(pub.Presence.Handle)
	pcap, ok2 := engine.ParseToken(pub.Presence.Token)
	handle := engine.Handle{UUID: hu}
	if !ok1 || !ok2 {
		l.count("untyped", "presence handle or token")
		return
	}
	l.bind(hostSock, mediator, stun.KindPresence, handle, &pcap, 1)
	l.do(b, "PUT", "/v1/listings/"+pub.ListingID+"/lease", tn.pub, map[string]any{"lease_id": pub.Lease.LeaseID,
		"lease_token": pub.Lease.Token, "expected_version": pub.Lease.Version}, "", http.StatusOK, nil)
	var j joined
	if l.do(b, "POST", "/v1/listings/"+pub.ListingID+"/join-attempts", tn.cli, map[string]any{"protocol_version": 7},
		fmt.Sprintf("j%d-w%d-%d", ti, w, i), http.StatusCreated, &j) != "success" {
		return
	}
	a, ok := l.attempt(ti, j)
	if !ok {
		return
	}
	hcap := engine.HostAttemptCapability(&pcap, a.handle)
	l.bind(hostSock, a.mediator, stun.KindAttemptHost, a.handle, &hcap, 0)
	_, intros := l.bind(a.sock, a.mediator, stun.KindAttemptClient, a.handle, &a.cap, 0)
	l.mu.Lock()
	a.intros += intros
	l.mu.Unlock()
}

// attempt records join j with a client socket of its own.
func (l *failoverLoad) attempt(ti int, j joined) (*failoverAttempt, bool) {
	hu, ok1 := engine.ParseUUID(j.Handle)
	c, ok2 := engine.ParseToken(j.Token)
	m, err := netip.ParseAddrPort(j.Mediator)
	h := engine.Handle{UUID: hu}
	if !ok1 || !ok2 || err != nil {
		l.count("untyped", "join answer")
		return nil, false
	}
	sock, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		l.t.Errorf("a UDP socket: %v", err)
		return nil, false
	}
	a := &failoverAttempt{tenant: ti, handle: h, cap: c, mediator: m, sock: sock, at: time.Now()}
	l.mu.Lock()
	l.attempts = append(l.attempts, a)
	l.mu.Unlock()
	return a, true
}

// watchCeilings reads /v1/admin/stats on both instances every 100 ms and
// records any pool above its ceiling.
func (l *failoverLoad) watchCeilings() {
	for !l.Stopped() {
		for _, p := range l.d.insts {
			l.checkCeilings(p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (l *failoverLoad) checkCeilings(p *proc) {
	req, _ := http.NewRequest("GET", "http://"+p.httpAddr+"/v1/admin/stats", nil)
	req.Header.Set("Authorization", "Bearer "+l.d.ops)
	resp, err := l.http.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	var st statsPools
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return // unavailable meanwhile: nothing to read
	}
	if over := st.over(); len(over) > 0 {
		l.mu.Lock()
		l.breaches = append(l.breaches, over...)
		l.mu.Unlock()
	}
}
