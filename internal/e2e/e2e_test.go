package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLockedBuffer(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Fatalf("%d bytes, want 800", n)
	}
}

func TestWritePrincipals(t *testing.T) {
	path, tok := WritePrincipals(t, map[string][3]string{"p": {"g", "e", "publisher"}})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Principals []Principal }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Principals) != 1 {
		t.Fatalf("file %s: %v", b, err)
	}
	if want := NewPrincipal("p", "g", "e", "publisher", tok["p"]); f.Principals[0].TokenSHA256 != want.TokenSHA256 || strings.Contains(string(b), tok["p"]) {
		t.Fatalf("file %s does not hold the token's digest alone", b)
	}
}

// TestRequest: the request carries the token, JSON body and headers, and
// a problem's code is read only from a problem answer.
func TestRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("Idempotency-Key") != "k" || string(body) != `{"a":1}` {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"code":"conflict"}`))
	}))
	defer srv.Close()
	req, err := NewRequest("POST", srv.URL, "tok", map[string]int{"a": 1}, "Idempotency-Key", "k")
	if err != nil {
		t.Fatal(err)
	}
	resp, body, err := Exchange(&http.Client{Timeout: 10 * time.Second}, req)
	if err != nil || resp.StatusCode != http.StatusConflict || ProblemCode(resp.Header, body) != "conflict" {
		t.Fatalf("answer %v %s %v, want 409 conflict", resp, body, err)
	}
	if c := ProblemCode(http.Header{"Content-Type": {"application/json"}}, body); c != "" {
		t.Fatalf("code %q from a JSON answer that is not a problem", c)
	}
}

// TestServer starts a stand-in for the server (a shell script printing a
// log line and a dev banner) and reads both.
func TestServer(t *testing.T) {
	script := `echo '{"msg":"listening","http":"127.0.0.1:1"}' >&2
for r in publisher client operator global-operator; do echo "  $r tok-$r"; done
exec sleep 30`
	s, err := Start([]string{"sh", "-c", script}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	rec, err := s.Listening(10 * time.Second)
	if err != nil || rec["http"] != "127.0.0.1:1" {
		t.Fatalf("listening %v %v", rec, err)
	}
	if err := s.Banner(10 * time.Second); err != nil || s.Tokens["global-operator"] != "tok-global-operator" || len(s.Tokens) != 4 {
		t.Fatalf("banner %v %v", s.Tokens, err)
	}
	if err := s.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Wait(time.Second); err != nil {
		t.Fatal(err)
	}
}
