package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/client"
)

// TestServerListMovesOn: RDV_SERVER naming two instances, the first of
// which refuses connections: the join's request goes to the second, the
// move is printed with both addresses (and nothing of the token), and the
// second's answer decides the outcome.
func TestServerListMovesOn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	var got atomic.Int32
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(404)
		w.Write([]byte(`{"type":"about:blank","title":"Not found","status":404,"code":"not_found","detail":"Not found"}`))
	}))
	defer live.Close()
	env := map[string]string{"RDV_SERVER": dead + "," + live.URL, "RDV_TOKEN": "secret-token-xyz"}
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"join", "--listing", "0190a6c8-0000-4000-8000-000000000001", "--listen", "127.0.0.1:0"},
		func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	if code != exitFailure || !strings.Contains(errOut.String(), "not_found") || got.Load() != 1 {
		t.Fatalf("exit %d, %d requests to the live instance, stderr %q", code, got.Load(), errOut.String())
	}
	want := "server " + dead + " cannot serve ("
	if !strings.HasPrefix(out.String(), want) || !strings.Contains(out.String(), "requests now go to "+live.URL+"\n") {
		t.Fatalf("stdout %q, want the move from %s to %s", out.String(), dead, live.URL)
	}
	if strings.Contains(out.String()+errOut.String(), env["RDV_TOKEN"]) {
		t.Fatal("the token was printed")
	}
}

// TestEventsNameTheMediator: the host's lines for a move, a silent
// mediator and a listing published again name the mediator concerned.
func TestEventsNameTheMediator(t *testing.T) {
	id, err := client.ParseListingID("0190a6c8-0000-4000-8000-000000000001")
	if err != nil {
		t.Fatal(err)
	}
	med := netip.MustParseAddrPort("10.0.0.2:3478")
	for _, c := range []struct {
		ev   client.Event
		want string
	}{
		{client.Event{Kind: client.EventMediatorMoved, Listing: id, Mediator: med},
			"listing " + id.String() + ": presence now goes to mediator 10.0.0.2:3478 "},
		{client.Event{Kind: client.EventUnreachable, Listing: id, Mediator: med, Err: client.ErrMediatorTimeout},
			"the server does not answer (mediator 10.0.0.2:3478: rendezvous: mediator did not answer); still trying"},
		{client.Event{Kind: client.EventRepublished, Listing: id, Mediator: med},
			"published again as listing " + id.String() + "\nlisting " + id.String() + " is mediated by 10.0.0.2:3478"},
	} {
		if got := describeEvent(c.ev); !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: %q, want %q", c.ev.Kind, got, c.want)
		}
	}
}
