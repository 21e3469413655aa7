package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/internal/haevidence"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// failoverFault is what a scenario did and when: listings answered between
// lossFrom and lossTo may have been lost (ADR 0007 "What a promotion
// loses"); every other admitted listing must survive.
type failoverFault struct {
	at               time.Time
	lossFrom, lossTo time.Time
	newPrimary       string
}

// verify runs, once the load is halted, every check a fault scenario
// shares and returns its evidence (scenario and description left to the
// caller): attempts made under the old primary are refused typed on a
// client bind and introduce nobody; no attempt was introduced twice;
// admitted listings survive unless the fault's window allows their loss;
// the store's invariants hold on the new primary; no pool ever went above
// its ceiling; no client read another tenant's listing; every answer was
// typed.
func (l *failoverLoad) verify(f failoverFault, limits engine.Limits) (haevidence.Record, time.Duration) {
	t := l.t
	t.Helper()
	// Sentinel may promote again: a new primary that stays silent for
	// down-after (1 s here; a busy machine) is failed over in turn. Every
	// check runs against the primary the sentinels settle on, and a further
	// promotion may have lost, by ADR 0007's rule, what was answered up to
	// it: the loss window then reaches the moment it was seen.
	now, err := l.d.top.WaitForWritablePrimary(context.Background(), 30*time.Second)
	if err != nil {
		t.Fatalf("%v%s", err, l.d.top.Describe(context.Background()))
	}
	if now != f.newPrimary {
		t.Logf("the sentinels promoted again after the fault: %s, not %s", now, f.newPrimary)
		f.newPrimary, f.lossTo = now, time.Now()
	}
	var refused, old int
	for _, a := range l.attempts {
		if !a.at.Before(f.at) {
			continue
		}
		old++
		o, intros := l.bind(a.sock, a.mediator, stun.KindAttemptClient, a.handle, &a.cap, 0)
		// An instance that has not yet followed a further promotion
		// answers service_unavailable: ask again, for a bounded while.
		for end := time.Now().Add(10 * time.Second); o == "service_unavailable" && time.Now().Before(end); {
			time.Sleep(200 * time.Millisecond)
			var more int
			o, more = l.bind(a.sock, a.mediator, stun.KindAttemptClient, a.handle, &a.cap, 0)
			intros += more
		}
		a.intros += intros
		if o == "not_found" {
			refused++
		} else {
			t.Errorf("a client bind of an attempt made under the old primary answered %s, want not_found (void)", o)
		}
	}
	deadline := time.Now().Add(500 * time.Millisecond) // late INTRODUCEs, on every socket at once
	buf := make([]byte, stun.MaxDatagram)
	doubles := 0
	for _, a := range l.attempts {
		_ = a.sock.SetReadDeadline(deadline)
		for {
			n, _, err := a.sock.ReadFromUDPAddrPort(buf)
			if err != nil {
				break
			}
			m := new(stun.Message)
			if stun.Parse(buf[:n:n], m) == nil && m.Type() == stun.IntroduceIndication {
				a.intros++
			}
		}
		a.sock.Close()
		if a.intros > 1 {
			doubles++
			t.Errorf("attempt %v: %d INTRODUCEs at its client, one bind each way", a.handle, a.intros)
		}
	}

	// Read on the new primary itself whether each admitted listing is
	// there (a client's GET would also hide a listing whose presence is
	// not fresh: those whose first refresh met the failover).
	checker := primaryStore(t, f.newPrimary, l.d.top.Options.Password, limits)
	lost, recovery := 0, time.Duration(-1)
	for _, ls := range l.listings {
		present := l.present(checker, f.newPrimary, ls)
		if !present {
			lost++
			if ls.at.Before(f.lossFrom) || ls.at.After(f.lossTo) {
				t.Errorf("a listing admitted %v after the fault was lost; only those admitted between %v and %v may be",
					ls.at.Sub(f.at).Round(time.Millisecond), f.lossFrom.Sub(f.at), f.lossTo.Sub(f.at))
			}
		}
		if present && ls.started.After(f.at) && (recovery < 0 || ls.at.Sub(f.at) < recovery) {
			recovery = ls.at.Sub(f.at)
		}
	}
	if recovery < 0 {
		t.Fatalf("no listing created after the fault is on the new primary")
	}
	if err := checker.CheckInvariants(); err != nil {
		t.Errorf("the store's invariants on the new primary: %v", err)
	}
	for _, p := range l.d.insts {
		l.checkCeilings(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.breaches) > 0 {
		t.Errorf("pools above their ceilings: %v", l.breaches)
	}
	if l.crossRead > 0 {
		t.Errorf("%d reads of another tenant's listing answered 200", l.crossRead)
	}
	if n := l.N("untyped"); n > 0 {
		t.Errorf("%d answers were not typed, e.g. %q", n, l.Examples("untyped"))
	}
	t.Logf("%d attempts made under the old primary, %d refused not_found on a client bind", old, refused)
	if unusual := l.Examples("unusual"); len(unusual) > 0 {
		t.Logf("other typed answers, e.g. %q", unusual)
	}
	return haevidence.Record{Answers: l.Answers(), LostAdmitted: int64(lost),
		DoubleIntroductions: int64(doubles), CeilingBreaches: int64(len(l.breaches)), CrossTenantReads: int64(l.crossRead)}, recovery
}

// present reports whether listing ls is on the store s (on the node addr).
func (l *failoverLoad) present(s *redisstore.Store, addr string, ls failoverListing) bool {
	l.t.Helper()
	id, ok := engine.ParseUUID(ls.id)
	if !ok {
		l.t.Fatalf("listing ID %q is not a UUID", ls.id)
	}
	// A read runs the store's cleanup, a write, which the new primary
	// refuses (NOREPLICAS: service_unavailable) while its replica resyncs
	// after the promotion, longer on a machine busy with other tests: retry
	// for a bounded while. The check reads, it is not timed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, r, err := s.GetListing(context.Background(), engine.GetListing{Tenant: failoverTenants[ls.tenant], Listing: engine.ListingID{UUID: id}})
		if err == nil && r.Outcome == engine.ServiceUnavailable && time.Now().Before(deadline) {
			continue
		}
		if err != nil || r.Outcome != engine.Success && r.Outcome != engine.NotFound {
			now, perr := l.d.top.PrimaryAddr(context.Background())
			l.t.Fatalf("reading a listing on the new primary %s: %v %v (the sentinels now name %q as primary: %v)%s",
				addr, r.Outcome, err, now, perr, l.d.top.Describe(context.Background()))
		}
		return r.OK()
	}
}

// primaryStore is a store on the data node addr itself (not through the
// sentinels), to run the invariant checker on that node's data.
func primaryStore(t *testing.T, addr, password string, limits engine.Limits) *redisstore.Store {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: password,
		DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatalf("connecting to %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: failoverRedisName, Limits: limits,
		Keyring: engine.RandomKeyring()})
	if err != nil {
		t.Fatalf("a store on %s: %v", addr, err)
	}
	return s
}

// waitServed waits (at most 30 s) until the load has a listing admitted
// whose create was sent after since.
func (l *failoverLoad) waitServed(since time.Time) {
	l.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		n := len(l.listings)
		served := n > 0 && l.listings[n-1].started.After(since)
		l.mu.Unlock()
		if served {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	l.t.Fatalf("no listing admitted within 30 s of %v", since)
}

// everyInstanceServes requires each instance to be ready and to publish.
func (l *failoverLoad) everyInstanceServes() {
	l.t.Helper()
	for i, p := range l.d.insts {
		waitReady(l.t, p, http.StatusOK, `{"status":"ready"}`)
		if o := l.do(p, "POST", "/v1/listings", l.d.tenants[0].pub, listingBody("after"), fmt.Sprintf("after-%d", i),
			http.StatusCreated, nil); o != "success" {
			l.t.Errorf("instance %d does not serve after the promotion: %s", i, o)
		}
	}
}
