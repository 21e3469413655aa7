package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// loadTally counts the answers the load got, by operation, status and
// problem code, and keeps the first unexpected one.
type loadTally struct {
	mu   sync.Mutex
	seen map[string]int
	errs []error
}

// allowedDuringDrain are the only answers the load may get, before or
// during the drain: success, or the typed refusal of new work.
var allowedDuringDrain = map[string]bool{
	"create 201": true, "create 503 draining": true,
	"renew 200": true, "renew 503 draining": true,
	"join 201": true, "join 503 draining": true,
	"get 200": true, "browse 200": true,
	"presence 200": true, "bind 200": true,
}

func (l *loadTally) add(op string, code int, body []byte, err error) {
	key := fmt.Sprintf("%s %d", op, code)
	if code >= 400 && code < 600 && op != "presence" && op != "bind" {
		var pr struct{ Code string }
		if json.Unmarshal(body, &pr) == nil {
			key += " " + pr.Code
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen[key]++
	if len(l.errs) >= 5 { // the first few tell the story
		return
	}
	switch {
	case err != nil:
		l.errs = append(l.errs, fmt.Errorf("%s: %w", op, err))
	case !allowedDuringDrain[key]:
		l.errs = append(l.errs, fmt.Errorf("unexpected answer %q: %s", key, body))
	}
}

func (l *loadTally) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[key]
}

// waitFor polls until every key was seen at least n times, a bounded
// number of times.
func (l *loadTally) waitFor(t *testing.T, n int, keys ...string) {
	t.Helper()
	for range 2000 {
		ok := true
		for _, k := range keys {
			ok = ok && l.count(k) >= n
		}
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("the load never saw %v %d times each: %v %v", keys, n, l.seen, l.errs)
}

// TestE2EDrainUnderLoad: SIGTERM while HTTP (publish, renew, get, browse,
// join) and UDP (presence refreshes, attempt binds) load runs. Every
// answer, before and during the drain, is a success or a typed 503
// draining (on Redis, where SIGTERM drains one instance of the deployment,
// lease renewals go on succeeding); new work is refused while attempts created before the drain
// still bind and are introduced; the process exits 0 on its own, within the
// drain window, once the last in-flight attempt is introduced.
func TestE2EDrainUnderLoad(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, append(storeArgs, "--drain-window", "30s", "--owner-listing-quota", "25000")...)
		client := &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
		defer client.CloseIdleConnections()
		slot := func(k int) *linSlot {
			s := &linSlot{idx: k, p: p, client: client, key: "drain-" + strconv.Itoa(k)}
			t.Cleanup(s.closeSockets)
			if err := s.openSockets(); err != nil {
				t.Fatal(err)
			}
			if out, err := s.create(linInput{}); err != nil || out.Code != http.StatusCreated {
				t.Fatalf("create: %v %v", out, err)
			}
			s.seq++
			if out, err := s.refresh(linInput{Seq: s.seq}); err != nil || out.Code != 200 {
				t.Fatalf("presence: %v %v", out, err)
			}
			return s
		}
		held, steady, joiner := slot(0), slot(1), slot(2)
		joiner.countOnly = true
		// The held attempt stays in flight until the test completes it, so
		// the process cannot exit while the load runs.
		if out, err := held.join(linInput{Key: 0}); err != nil || out.Code != http.StatusCreated {
			t.Fatalf("join: %v %v", out, err)
		}

		tally := &loadTally{seen: map[string]int{}}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		loop := func(f func(n int)) {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					case <-time.After(10 * time.Millisecond): // load, not a stress test: the machine is shared
					}
					f(n)
				}
			})
		}
		loop(func(n int) {
			code, b, err := steady.do("POST", "/v1/listings", "publisher", listingBody("Load"), "Idempotency-Key", "drain-load-"+strconv.Itoa(n))
			tally.add("create", code, b, err)
		})
		version := uint64(1) // one renewer: its expectation is always current
		loop(func(int) {
			code, b, err := steady.do("PUT", "/v1/listings/"+steady.listing+"/lease", "publisher",
				map[string]any{"lease_id": steady.leaseID, "lease_token": steady.leaseToken, "expected_version": version})
			tally.add("renew", code, b, err)
			if code == http.StatusOK {
				version++
			}
		})
		loop(func(n int) {
			var out linOutput
			var err error
			op := "get"
			if n%2 == 0 {
				out, err = steady.get()
			} else {
				op = "browse"
				out, err = steady.browse()
			}
			tally.add(op, out.Code, nil, err)
		})
		loop(func(int) {
			steady.mu.Lock()
			steady.seq++
			in := linInput{Seq: steady.seq}
			steady.mu.Unlock()
			out, err := steady.refresh(in)
			tally.add("presence", out.Code, nil, err)
		})
		loop(func(n int) { joinAndBind(joiner, n, tally) })

		tally.waitFor(t, 20, "create 201", "renew 200", "get 200", "browse 200", "presence 200", "join 201", "bind 200")
		renewed := tally.count("renew 200")
		p.signal(syscall.SIGTERM)
		p.waitReadiness(http.StatusServiceUnavailable)
		if storeOf(storeArgs) == "redis" {
			// SIGTERM drains this instance of the deployment only: its hosts
			// go on renewing (and are told where to move), the shared state
			// is not drained.
			tally.waitFor(t, 20, "create 503 draining", "join 503 draining", "presence 200", "get 200")
			tally.waitFor(t, renewed+20, "renew 200")
		} else {
			tally.waitFor(t, 20, "create 503 draining", "renew 503 draining", "join 503 draining", "presence 200", "get 200")
		}
		close(stop)
		wg.Wait()
		for _, err := range tally.errs {
			t.Error(err)
		}
		t.Logf("answers: %v", tally.seen)
		// Every attempt the load created, some just before the drain began,
		// was bound by both sides.
		if binds, joins := tally.count("bind 200"), tally.count("join 201"); binds != 2*joins {
			t.Errorf("%d successful binds for %d created attempts, want two each", binds, joins)
		}
		if t.Failed() {
			t.FailNow()
		}

		// The held attempt, created before the drain, is still introduced.
		a := held.attempts[0]
		for role, sock := range []*linSock{held.host[0], held.clients[0]} {
			kind, key := stun.KindAttemptHost, a.hostCap
			if role == roleClientIdx {
				kind, key = stun.KindAttemptClient, a.clientCap
			}
			if code, _, err := sock.roundTrip(kind, a.handle, &key, 0); err != nil || code != 200 {
				t.Fatalf("bind of the held attempt while draining: %d %v", code, err)
			}
		}
		if code := p.wait(); code != 0 {
			t.Fatalf("exit status %d, want 0; log:\n%s", code, p.stderr.String())
		}
		if fin := p.logged("drain finished"); fin == nil || fin["reason"] != "idle" {
			t.Fatalf("drain finished line %v, want reason idle (every in-flight attempt was introduced)", fin)
		}
		if err := held.sockErr(); err != nil {
			t.Fatal(err)
		}
	})
}

// joinAndBind is one client of the load: a join and, when it is created,
// both binds, so its attempt does not stay in flight.
func joinAndBind(s *linSlot, n int, tally *loadTally) {
	code, b, err := s.do("POST", "/v1/listings/"+s.listing+"/join-attempts", "client", map[string]any{"protocol_version": 7},
		"Idempotency-Key", "drain-join-"+strconv.Itoa(n))
	tally.add("join", code, b, err)
	if err != nil || code != http.StatusCreated {
		return
	}
	var j joined
	if err := json.Unmarshal(b, &j); err != nil {
		tally.add("join", code, b, err)
		return
	}
	h := mustParseHandle(j.Handle)
	clientCap, _ := engine.ParseToken(j.Token)
	hostCap := engine.HostAttemptCapability(&s.presCap, h)
	for _, bind := range []struct {
		sock *linSock
		kind byte
		key  *engine.Capability
	}{{s.host[0], stun.KindAttemptHost, &hostCap}, {s.clients[0], stun.KindAttemptClient, &clientCap}} {
		code, _, err := bind.sock.roundTrip(bind.kind, h, bind.key, 0)
		tally.add("bind", code, nil, err)
	}
}

func mustParseHandle(s string) engine.Handle {
	u, _ := engine.ParseUUID(s) // a bad handle fails the bind, which is tallied
	return engine.Handle{UUID: u}
}
