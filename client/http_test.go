package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// fakeHTTP answers with the queued handlers in order and records requests.
type fakeHTTP struct {
	mu   sync.Mutex
	reqs []*http.Request
	keys []string
	next []http.HandlerFunc
}

func (f *fakeHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r)
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	var h http.HandlerFunc
	if len(f.next) > 0 {
		h, f.next = f.next[0], f.next[1:]
	}
	f.mu.Unlock()
	if h == nil {
		http.Error(w, "unexpected", 500)
		return
	}
	h(w, r)
}

func (f *fakeHTTP) count() int { f.mu.Lock(); defer f.mu.Unlock(); return len(f.reqs) }

func problem(status int, code, extra string, hdr ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(hdr); i += 2 {
			w.Header().Set(hdr[i], hdr[i+1])
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		w.Write([]byte(`{"type":"about:blank","title":"t","status":` + strconv.Itoa(status) + `,"code":"` + code + `"` + extra + `}`))
	}
}

func jsonOK(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func newFake(t *testing.T) (*fakeHTTP, *API) {
	t.Helper()
	f := &fakeHTTP{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	api, err := NewAPI(srv.URL, "tok-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	api.Retry.Min, api.Retry.Max = 1, 2 // keep retries instant
	return f, api
}

func goodSpec() ListingSpec {
	return ListingSpec{Region: "eu-central", ProtocolVersion: 7, BuildVersion: "1.2.3", DisplayName: "Test host",
		Visibility: "public", TrustMode: "player_hosted", CurrentPlayers: 1, MaxPlayers: 8, Metadata: map[string]string{"mode": "coop"}}
}

const createdBody = `{"listing_id":"0190a6c8-0000-4000-8000-000000000001",
 "lease":{"lease_id":"0190a6c8-0000-4000-8000-000000000002","token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","version":1,"expires_at":"2026-07-16T00:01:00Z","ttl_s":60},
 "presence":{"handle":"0190a6c8-0000-4000-8000-000000000003","token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA","mediator":"127.0.0.1:3478","interval_s":5,"ttl_s":20}}`

func TestCreateListingBadInputSendsNothing(t *testing.T) {
	f, api := newFake(t)
	g := func(key string, mutate func(*ListingSpec), field string) {
		t.Helper()
		s := goodSpec()
		mutate(&s)
		_, err := api.CreateListing(context.Background(), key, s)
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(ie.Field, field) {
			t.Fatalf("got %v, want *InputError on %s", err, field)
		}
		if f.count() != 0 {
			t.Fatalf("a refused creation sent %d requests", f.count())
		}
	}
	g("k", func(s *ListingSpec) { s.Region = "EU" }, "region")
	g("k", func(s *ListingSpec) { s.ProtocolVersion = 0 }, "protocol_version")
	g("k", func(s *ListingSpec) { s.DisplayName = "" }, "display_name")
	g("k", func(s *ListingSpec) { s.Visibility = "secret" }, "visibility")
	g("k", func(s *ListingSpec) { s.CurrentPlayers = 9 }, "current_players")
	g("k", func(s *ListingSpec) { s.Metadata = map[string]string{"BAD": "x"} }, "metadata")
	g("", func(*ListingSpec) {}, "Idempotency-Key")
	g("has space", func(*ListingSpec) {}, "Idempotency-Key")
}

func TestCreateListingRetriesWithSameKey(t *testing.T) {
	f, api := newFake(t)
	f.next = []http.HandlerFunc{
		problem(503, "capacity_exceeded", "", "Retry-After", "0"),
		problem(503, "service_unavailable", ""),
		jsonOK(200, createdBody),
	}
	f.next[2] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Idempotent-Replay", "true")
		jsonOK(200, createdBody)(w, r)
	}
	c, err := api.CreateListing(context.Background(), "key-1", goodSpec())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Replayed || c.Presence.Mediator != "127.0.0.1:3478" || c.Lease.Version != 1 {
		t.Fatalf("decoded %+v", c)
	}
	if f.count() != 3 || f.keys[0] != "key-1" || f.keys[1] != "key-1" || f.keys[2] != "key-1" {
		t.Fatalf("requests %d with keys %v, want 3 with key-1", f.count(), f.keys)
	}
	if ct := f.reqs[0].Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
}

func TestNoRetryWhereUnsafe(t *testing.T) {
	f := func(status int, code string, want error, hdr ...string) {
		t.Helper()
		fk, api := newFake(t)
		fk.next = []http.HandlerFunc{problem(status, code, "", hdr...), jsonOK(201, createdBody)}
		_, err := api.CreateListing(context.Background(), "k", goodSpec())
		if !errors.Is(err, want) {
			t.Fatalf("%s: got %v, want %v", code, err, want)
		}
		if fk.count() != 1 {
			t.Fatalf("%s: retried (%d requests)", code, fk.count())
		}
	}
	f(503, "draining", ErrDraining)
	f(409, "conflict", ErrConflict)
	f(410, "expired", ErrExpired)
	f(400, "invalid_request", ErrInvalidRequest)
	f(403, "revoked", ErrRevoked)
	f(429, "quota_exceeded", ErrQuotaExceeded, "Retry-After", "60") // too long to wait out
}

func TestRenewConflictCarriesVersion(t *testing.T) {
	f, api := newFake(t)
	f.next = []http.HandlerFunc{problem(409, "conflict", `,"current_version":5`)}
	l := Lease{Version: 3}
	err := api.RenewLease(context.Background(), ListingID(engine.NewUUID()), &l, -1)
	var ae *APIError
	if !errors.As(err, &ae) || ae.CurrentVersion != 5 || !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v", err)
	}
	if l.Version != 3 {
		t.Fatalf("a failed renewal changed the lease version to %d", l.Version)
	}
}

const (
	idA = "00000000-0000-4000-8000-00000000000a"
	idB = "00000000-0000-4000-8000-00000000000b"
	idC = "00000000-0000-4000-8000-00000000000c"
)

func TestBrowseFollowsCursor(t *testing.T) {
	f, api := newFake(t)
	f.next = []http.HandlerFunc{
		jsonOK(200, `{"items":[{"listing_id":"`+idA+`"},{"listing_id":"`+idB+`"}],"next_after":"`+idB+`","next_cursor":"c1"}`),
		jsonOK(200, `{"items":[],"next_after":null,"next_cursor":"c2"}`), // a page cut short by the examination bound
		jsonOK(200, `{"items":[{"listing_id":"`+idC+`"}],"next_after":null,"next_cursor":null}`),
	}
	var got []string
	for l, err := range api.Browse(context.Background(), BrowseQuery{ProtocolVersion: 7, PageSize: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, l.ListingID.String())
	}
	if strings.Join(got, ",") != idA+","+idB+","+idC {
		t.Fatalf("got %v", got)
	}
	if q := f.reqs[1].URL.Query(); q.Get("cursor") != "c1" || q.Has("after") || q.Get("limit") != "2" || q.Get("protocol_version") != "7" {
		t.Fatalf("second page query %v", q)
	}
	if q := f.reqs[2].URL.Query(); q.Get("cursor") != "c2" {
		t.Fatalf("third page query %v", q)
	}
	// A listing ID starts after that listing (order id).
	f.next = []http.HandlerFunc{jsonOK(200, `{"items":[],"next_after":null,"next_cursor":null}`)}
	if _, _, err := api.BrowsePage(context.Background(), BrowseQuery{ProtocolVersion: 7}, idB); err != nil {
		t.Fatal(err)
	}
	if q := f.reqs[3].URL.Query(); q.Get("after") != idB || q.Has("cursor") {
		t.Fatalf("a page after a listing ID: %v", q)
	}
}

func TestNewAPIBadConfig(t *testing.T) {
	f := func(url, tok string) {
		t.Helper()
		var ce *ConfigError
		if _, err := NewAPI(url, tok, nil); !errors.As(err, &ce) {
			t.Fatalf("NewAPI(%q): got %v, want *ConfigError", url, err)
		}
	}
	f("127.0.0.1:8080", "t")
	f("ftp://x", "t")
	f("http://x", "")
	f("http://x", "a b")
}
