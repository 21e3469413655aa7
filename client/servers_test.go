package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// deadURL is the base URL of a loopback port nothing listens on any more:
// connecting to it is refused.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// newFakes starts n fake instances and an API listing first, then their
// URLs, recording each move of its requests.
func newFakes(t *testing.T, first string, n int) ([]*fakeHTTP, []string, *API, *moves) {
	t.Helper()
	var fakes []*fakeHTTP
	urls := []string{}
	if first != "" {
		urls = append(urls, first)
	}
	for range n {
		f := &fakeHTTP{}
		srv := httptest.NewServer(f)
		t.Cleanup(srv.Close)
		fakes = append(fakes, f)
		urls = append(urls, srv.URL)
	}
	api, err := NewAPI(strings.Join(urls, ","), "tok-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	api.Retry.Min, api.Retry.Max = 1, 2 // keep retries instant
	m := &moves{}
	api.OnServerChange = m.add
	return fakes, urls, api, m
}

type moves struct {
	mu   sync.Mutex
	list []string
}

func (m *moves) add(from, to string, cause error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.list = append(m.list, from+" -> "+to+": "+cause.Error())
}

func (m *moves) get() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.list...)
}

// TestServersRefusedMovesOn: the first instance refuses connections; the
// creation is sent to the next with the same Idempotency-Key, the move is
// reported once, and the next request goes straight to the live instance.
func TestServersRefusedMovesOn(t *testing.T) {
	dead := deadURL(t)
	fakes, urls, api, m := newFakes(t, dead, 1)
	live := fakes[0]
	live.next = []http.HandlerFunc{jsonOK(201, createdBody), jsonOK(200, `{"subject":"s","game_id":"g","environment_id":"e","roles":[]}`)}
	if _, err := api.CreateListing(context.Background(), "key-0123456789abcdef", goodSpec()); err != nil {
		t.Fatalf("create through the second instance: %v", err)
	}
	if got := m.get(); len(got) != 1 || !strings.HasPrefix(got[0], dead+" -> "+urls[1]+": ") || !strings.Contains(got[0], "refused") {
		t.Fatalf("moves %q, want one from %s to %s naming the refusal", got, dead, urls[1])
	}
	if api.Server() != urls[1] {
		t.Fatalf("Server() = %s, want %s", api.Server(), urls[1])
	}
	if _, err := api.Whoami(context.Background()); err != nil {
		t.Fatal(err)
	}
	if live.count() != 2 || len(m.get()) != 1 {
		t.Fatalf("the live instance saw %d requests, %d moves; want 2 and still 1", live.count(), len(m.get()))
	}
	if live.keys[0] != "key-0123456789abcdef" {
		t.Fatalf("the retry carried key %q", live.keys[0])
	}
}

// TestServersUnavailableMovesOn: 503 service_unavailable (an instance cut
// off from the store, Retry-After 5: too long to wait out) and 503 draining
// send the request to the next instance at once, and the list wraps around.
func TestServersUnavailableMovesOn(t *testing.T) {
	fakes, urls, api, m := newFakes(t, "", 3)
	fakes[0].next = []http.HandlerFunc{problem(503, "service_unavailable", "", "Retry-After", "5")}
	fakes[1].next = []http.HandlerFunc{problem(503, "draining", "", "Retry-After", "30")}
	fakes[2].next = []http.HandlerFunc{problem(503, "service_unavailable", "", "Retry-After", "5")}
	fakes[0].next = append(fakes[0].next, jsonOK(200, `{"subject":"s","game_id":"g","environment_id":"e","roles":[]}`))
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrServiceUnavailable) {
		t.Fatalf("every instance unavailable: %v, want service_unavailable after one try each", err)
	}
	for i, f := range fakes {
		if f.count() != 1 {
			t.Fatalf("instance %d saw %d requests, want 1", i, f.count())
		}
	}
	if api.Server() != urls[0] || len(m.get()) != 3 {
		t.Fatalf("after a full round: Server() %s, moves %q", api.Server(), m.get())
	}
	if _, err := api.Whoami(context.Background()); err != nil {
		t.Fatalf("the first instance serves again: %v", err)
	}
}

// TestServersAllDraining: a deployment-wide drain is the answer once every
// instance has said so; nothing else is retried.
func TestServersAllDraining(t *testing.T) {
	fakes, _, api, _ := newFakes(t, "", 2)
	for _, f := range fakes {
		f.next = []http.HandlerFunc{problem(503, "draining", "", "Retry-After", "30"), problem(503, "draining", "")}
	}
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrDraining) {
		t.Fatalf("got %v, want draining", err)
	}
	if fakes[0].count() != 1 || fakes[1].count() != 1 {
		t.Fatalf("requests %d and %d, want one each", fakes[0].count(), fakes[1].count())
	}
}

// TestServersSharedOutcomesStay: outcomes of the shared state (a quota, a
// conflict, not found) are the same on every instance: no move.
func TestServersSharedOutcomesStay(t *testing.T) {
	fakes, urls, api, m := newFakes(t, "", 2)
	fakes[0].next = []http.HandlerFunc{problem(429, "quota_exceeded", "", "Retry-After", "5"), problem(404, "not_found", "")}
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrQuotaExceeded) {
		t.Fatalf("got %v, want quota_exceeded", err)
	}
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrNotFound) {
		t.Fatalf("got %v, want not_found", err)
	}
	if fakes[1].count() != 0 || api.Server() != urls[0] || len(m.get()) != 0 {
		t.Fatalf("moved on a shared outcome: second instance saw %d, moves %q", fakes[1].count(), m.get())
	}
}

// TestServersHungInstance: an instance that takes the connection and never
// answers holds a request until the caller's deadline; the next request goes
// to another instance.
func TestServersHungInstance(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hung.Close)
	t.Cleanup(func() { close(release) })
	fakes, urls, api, m := newFakes(t, hung.URL, 1)
	fakes[0].next = []http.HandlerFunc{jsonOK(200, `{"subject":"s","game_id":"g","environment_id":"e","roles":[]}`)}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := api.Whoami(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline", err)
	}
	if api.Server() != urls[1] || len(m.get()) != 1 {
		t.Fatalf("Server() %s, moves %q: want a move to %s", api.Server(), m.get(), urls[1])
	}
	if _, err := api.Whoami(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestServersOneURLUnchanged: with one instance, draining and a long
// Retry-After are answered at once, as before.
func TestServersOneURLUnchanged(t *testing.T) {
	f, api := newFake(t)
	f.next = []http.HandlerFunc{problem(503, "draining", "", "Retry-After", "30"), problem(503, "service_unavailable", "", "Retry-After", "5")}
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrDraining) {
		t.Fatalf("got %v", err)
	}
	if _, err := api.Whoami(context.Background()); !errors.Is(err, ErrServiceUnavailable) {
		t.Fatalf("got %v", err)
	}
	if f.count() != 2 {
		t.Fatalf("%d requests, want 2 (no retry)", f.count())
	}
}

// TestServersParse: several URLs separated by commas (spaces and trailing
// slashes ignored); a bad one or a repeated one is refused; credentials in
// a URL are never shown.
func TestServersParse(t *testing.T) {
	api, err := NewAPI(" http://a:1/ , https://b:2", "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(api.Servers(), " "); got != "http://a:1 https://b:2" || api.Server() != "http://a:1" {
		t.Fatalf("Servers() %q, Server() %q", got, api.Server())
	}
	for _, bad := range []string{"http://a:1,", "http://a:1,ftp://b", "http://a:1,http://a:1/", ""} {
		var ce *ConfigError
		if _, err := NewAPI(bad, "tok", nil); !errors.As(err, &ce) || ce.Field != "server URL" {
			t.Fatalf("NewAPI(%q): %v, want a server URL ConfigError", bad, err)
		}
	}
	api, err = NewAPI("http://user:hunter2@a:1,http://b:2", "tok", nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(api.Servers(), " "); strings.Contains(s, "hunter2") {
		t.Fatalf("Servers() shows the password: %q", s)
	}
}
