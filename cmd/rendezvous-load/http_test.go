package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/engine"
)

// Every answer the tester may get is classified by status and problem code,
// through the SDK's typed errors, and each call is sent exactly once.
func TestClassifyAnswers(t *testing.T) {
	var hits atomic.Int64
	var answer atomic.Value // func(http.ResponseWriter)
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			w.WriteHeader(500)
			return
		}
		answer.Load().(func(http.ResponseWriter))(w)
	}))
	defer srv.Close()
	defer close(block) // releases a handler the timeout case left waiting
	tok := &Tokens{Publishers: []string{testToken}, Clients: []string{testToken}}
	s, err := newAPISet(strings.TrimPrefix(srv.URL, "http://"), 4, 200*time.Millisecond, tok)
	if err != nil {
		t.Fatal(err)
	}
	id := client.ListingID(engine.NewUUID())
	f := func(want Code, h func(w http.ResponseWriter)) {
		t.Helper()
		answer.Store(h)
		before := hits.Load()
		_, err := s.clients[0].GetListing(context.Background(), id)
		if got := classify(err); got != want {
			t.Fatalf("classified %s (%v), want %s", got, err, want)
		}
		if n := hits.Load() - before; n != 1 {
			t.Fatalf("%d requests for one call: the tester must not retry", n)
		}
	}
	problem := func(status int, code string, hdr ...string) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			for i := 0; i+1 < len(hdr); i += 2 {
				w.Header().Set(hdr[i], hdr[i+1])
			}
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			w.Write([]byte(`{"title":"t","status":0,"code":"` + code + `"}`))
		}
	}
	bare := func(status int) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) { w.WriteHeader(status) }
	}
	f(CodeOK, func(w http.ResponseWriter) { w.Write([]byte(`{"listing_id":"` + id.String() + `"}`)) })
	f(CodeCapacity, problem(503, "capacity_exceeded", "Retry-After", "1"))
	f(CodeQuota, problem(429, "quota_exceeded", "Retry-After", "1"))
	f(CodeDraining, problem(503, "draining"))
	f(CodeUnavailable, problem(503, "service_unavailable", "Retry-After", "1"))
	f(CodeNotFound, problem(404, "not_found"))
	f(CodeConflict, problem(409, "conflict"))
	f(CodeRevoked, problem(403, "revoked"))
	f(CodeForbidden, problem(403, "forbidden"))
	f(CodeUnauthorized, problem(401, "unauthorized"))
	f(CodeBadRequest, problem(400, "invalid_request"))
	f(CodeUntyped, bare(429)) // not typed: no shed
	f(CodeUntyped, bare(503))
	f(CodeUntyped, bare(500))
	f(CodeUntyped, problem(404, "no_such_code"))
	// Every error answer above but the bare ones was problem+json; one with
	// another media type is counted, whatever its body.
	if n := s.untypedAnswers(); n != 3 {
		t.Fatalf("%d error answers counted as not problem+json, want the 3 bare ones", n)
	}
	f(CodeNotFound, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		w.Write([]byte(`{"code":"not_found"}`))
	})
	if n := s.untypedAnswers(); n != 4 {
		t.Fatalf("an application/json error answer was not counted: %d", n)
	}
	f(CodeOtherStatus, func(w http.ResponseWriter) { w.Write([]byte(`not json`)) })
	f(CodeTimeout, func(w http.ResponseWriter) { <-block })

	// A create the SDK refuses locally is a bad request and sends nothing.
	before := hits.Load()
	_, err = s.pubs[0].CreateListing(context.Background(), "k", listingSpec(1, "", 7))
	if classify(err) != CodeBadRequest || hits.Load() != before {
		t.Fatalf("invalid spec: %v, %d requests", err, hits.Load()-before)
	}

	// Nothing listening: a transport error.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s2, err := newAPISet(addr, 1, time.Second, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.clients[0].GetListing(context.Background(), id); classify(err) != CodeTransport {
		t.Fatalf("connection refused classified %s (%v)", classify(err), err)
	}
	if classify(nil) != CodeOK || classify(errors.New("x")) != CodeTransport || classify(context.DeadlineExceeded) != CodeTimeout {
		t.Fatal("classify of plain errors is wrong")
	}
}

const testToken = "tok-load-test"

// A token the SDK refuses is a usage error that names the principal, never
// the token.
func TestNewAPISetRefusesBadTokens(t *testing.T) {
	f := func(tok *Tokens, want string) {
		t.Helper()
		_, err := newAPISet("127.0.0.1:1", 1, time.Second, tok)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Setting != "tokens" || !strings.Contains(err.Error(), want) {
			t.Fatalf("got %v, want a tokens ConfigError naming %q", err, want)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Fatalf("error reveals a token: %v", err)
		}
	}
	f(&Tokens{Publishers: []string{"ok", "secret value"}, Clients: []string{"c"}}, "publisher 1")
	f(&Tokens{Publishers: []string{"ok"}, Clients: []string{""}}, "client 0")
	f(&Tokens{Publishers: []string{"ok"}, Clients: []string{"c"}, Operator: "secret\n"}, "operator")
	s, err := newAPISet("127.0.0.1:1", 1, time.Second, &Tokens{})
	if err != nil || s.op != nil || len(s.pubs) != 0 {
		t.Fatalf("empty tokens (udprate plain): %v", err)
	}
}

// The pool's client reads /metrics without a token.
func TestMetrics(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" || r.Header.Get("Authorization") != "" {
			w.WriteHeader(404)
			return
		}
		w.Write([]byte("process_cpu_seconds_total 1.5\nprocess_resident_memory_bytes 1048576\n"))
	}))
	defer srv.Close()
	s, err := newAPISet(strings.TrimPrefix(srv.URL, "http://"), 1, time.Second, &Tokens{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := s.metrics(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u, err := metricsUsage(body)
	if err != nil || u.CPUSeconds != 1.5 || u.RSSBytes != 1<<20 {
		t.Fatalf("usage %+v, %v", u, err)
	}
	s.base += "/nope"
	if _, err := s.metrics(context.Background()); err == nil || !strings.Contains(err.Error(), "status 404") {
		t.Fatalf("404 metrics: %v", err)
	}
}
