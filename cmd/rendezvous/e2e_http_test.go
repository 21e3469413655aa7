package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/e2e"
)

// httpClient talks to one server; no connection reuse, so drain and exit
// are never held up by an idle keep-alive connection of the test.
var httpClient = &http.Client{
	Timeout:   hangGuard,
	Transport: &http.Transport{DisableKeepAlives: true},
}

type httpReply struct {
	status int
	header http.Header
	body   []byte
}

// call sends one request; hdr alternates names and values.
func (p *proc) call(method, path, token string, body any, hdr ...string) httpReply {
	p.t.Helper()
	req, err := e2e.NewRequest(method, "http://"+p.httpAddr+path, token, body, hdr...)
	if err != nil {
		p.t.Fatal(err)
	}
	resp, b, err := e2e.Exchange(p.client, req)
	if resp == nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	if err != nil {
		p.t.Fatalf("%s %s: reading the body: %v", method, path, err)
	}
	return httpReply{resp.StatusCode, resp.Header, b}
}

// expect fails unless the reply has status want, and decodes its JSON body
// into out (if not nil).
func (r httpReply) expect(t testing.TB, what string, want int, out any) {
	t.Helper()
	if r.status != want {
		t.Fatalf("%s: status %d, want %d; body %s", what, r.status, want, r.body)
	}
	if out != nil {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Fatalf("%s: body %s: %v", what, r.body, err)
		}
	}
}

// problemCode returns the problem+json code of an error reply.
func (r httpReply) problemCode(t testing.TB) string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Fatalf("error reply has Content-Type %q; body %s", ct, r.body)
	}
	var pr struct{ Code string }
	if err := json.Unmarshal(r.body, &pr); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	return pr.Code
}

// listingBody is a valid publish request.
func listingBody(name string) map[string]any {
	return map[string]any{
		"region": "eu-central", "protocol_version": 7, "build_version": "1.2.3",
		"display_name": name, "visibility": "public", "trust_mode": "managed_dedicated",
		"current_players": 1, "max_players": 8, "metadata": map[string]string{"mode": "coop"},
	}
}

type published struct {
	ListingID string `json:"listing_id"`
	Lease     struct {
		LeaseID string `json:"lease_id"`
		Token   string `json:"token"`
		Version uint64 `json:"version"`
		TTL     int    `json:"ttl_s"`
	} `json:"lease"`
	Presence struct {
		Handle   string `json:"handle"`
		Token    string `json:"token"`
		Mediator string `json:"mediator"`
		Interval int    `json:"interval_s"`
		TTL      int    `json:"ttl_s"`
	} `json:"presence"`
}

type joined struct {
	AttemptID string `json:"attempt_id"`
	Handle    string `json:"handle"`
	Token     string `json:"token"`
	Mediator  string `json:"mediator"`
	TTL       int    `json:"ttl_s"`
}

type browsePage struct {
	Items []struct {
		ListingID   string `json:"listing_id"`
		DisplayName string `json:"display_name"`
	} `json:"items"`
	NextAfter *string `json:"next_after"`
}

// publish creates a listing with idempotency key key.
func (p *proc) publish(key, name string) published {
	p.t.Helper()
	var pub published
	p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody(name), "Idempotency-Key", key).
		expect(p.t, "publish", http.StatusCreated, &pub)
	return pub
}

// join creates a join attempt on listing id.
func (p *proc) join(key, id string) joined {
	p.t.Helper()
	var j joined
	p.call("POST", "/v1/listings/"+id+"/join-attempts", p.tokens["client"], map[string]any{"protocol_version": 7},
		"Idempotency-Key", key).expect(p.t, "join", http.StatusCreated, &j)
	return j
}

// waitReadiness polls /readyz until it answers want, a bounded number of
// times; it fails if the server exits first.
func (p *proc) waitReadiness(want int) {
	p.t.Helper()
	for i := 0; i < 400; i++ {
		select {
		case <-p.exited:
			p.t.Fatalf("the server exited before /readyz answered %d; log:\n%s", want, p.stderr.String())
		default:
		}
		if r := p.call("GET", "/readyz", "", nil); r.status == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.t.Fatalf("/readyz never answered %d", want)
}
