package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLivezKind: the livez kind is GET /livez over the shared pool, 200
// counted OK and anything else an error, and --rate accepts it.
func TestLivezKind(t *testing.T) {
	var status atomic.Int32
	status.Store(200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != "/livez" {
			t.Errorf("%s %s, want GET /livez", r.Method, r.URL.Path)
		}
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(`{"status":"live"}`))
	}))
	defer srv.Close()
	s, err := newAPISet(strings.TrimPrefix(srv.URL, "http://"), 2, 5*time.Second, &Tokens{})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.livez(context.Background()); c != CodeOK {
		t.Fatalf("200: %s, want ok", c)
	}
	status.Store(503)
	if c := s.livez(context.Background()); c == CodeOK {
		t.Fatal("503 counted ok")
	}
	var r RateSet
	if err := r.Set("livez=100,get=5"); err != nil || r[KindLivez] != 100 {
		t.Fatalf("--rate livez=100: %v %v", r[KindLivez], err)
	}
}
