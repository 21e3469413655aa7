package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

func TestStats(t *testing.T) {
	f, api := newFake(t)
	f.next = append(f.next, jsonOK(200, `{"instance_id":"i-1","available":true,"draining":false,
 "pools":{"listings":{"used":3,"ceiling":25000},"attempts":{"used":0,"ceiling":10000}}}`))
	st, err := api.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.InstanceID != "i-1" || !st.Available || st.Draining || st.Pools["listings"] != (PoolStat{3, 25000}) || st.Pools["attempts"].Ceiling != 10000 {
		t.Fatalf("stats %+v", st)
	}
	if r := f.reqs[0]; r.Method != "GET" || r.URL.Path != "/v1/admin/stats" || r.Header.Get("Authorization") != "Bearer tok-test" {
		t.Fatalf("request %s %s", r.Method, r.URL)
	}
	// A non-operator is refused with the typed error, not retried.
	f.next = append(f.next, problem(403, "forbidden", ""))
	if _, err := api.Stats(context.Background()); !errors.Is(err, ErrForbidden) || f.count() != 2 {
		t.Fatalf("forbidden stats: %v after %d requests", err, f.count())
	}
	// An answer that is not the stats shape is a ProtocolError.
	f.next = append(f.next, jsonOK(200, `{"pools":[]}`))
	var pe *ProtocolError
	if _, err := api.Stats(context.Background()); !errors.As(err, &pe) {
		t.Fatalf("malformed stats: %v", err)
	}
}

// APIError.Inferred tells a problem code the server sent from one guessed
// from the status alone.
func TestAPIErrorInferred(t *testing.T) {
	f, api := newFake(t)
	api.Retry.Attempts = 1 // no retries: each call is one answer
	bare := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }
	}
	g := func(h http.HandlerFunc, status int, code string, inferred bool) {
		t.Helper()
		f.next = append(f.next, h)
		_, err := api.Stats(context.Background())
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != status || ae.Code != code || ae.Inferred != inferred {
			t.Fatalf("got %#v, want status %d code %q inferred %v", err, status, code, inferred)
		}
	}
	g(problem(429, "quota_exceeded", ""), 429, "quota_exceeded", false)
	g(problem(503, "capacity_exceeded", "", "Retry-After", "5"), 503, "capacity_exceeded", false)
	g(problem(503, "draining", ""), 503, "draining", false)
	g(bare(429), 429, "quota_exceeded", true)
	g(bare(503), 503, "service_unavailable", true)
	g(bare(500), 500, "http_500", true)
	if f.count() != 6 {
		t.Fatalf("%d requests for 6 calls: Attempts 1 must not retry", f.count())
	}
}
