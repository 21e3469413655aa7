package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// startRelayServer starts coturn on loopback and the server binary granting
// credentials for it with serverSecret (coturn's own secret when empty).
func startRelayServer(t *testing.T, serverSecret string) (*testServer, *coturn) {
	t.Helper()
	tc := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), relayTestSecret)
	if serverSecret == "" {
		serverSecret = relayTestSecret
	}
	f := filepath.Join(t.TempDir(), "turn-secret")
	if err := os.WriteFile(f, []byte(serverSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, nil, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0",
		"--turn-uri", "turn:"+tc.addr.String()+"?transport=udp", "--turn-secret-file", f,
		"--relay-allow-peers", "127.0.0.0/8") // the test relay is on loopback
	return srv, tc
}

// outcomes reads the server's punch outcome counters of the dev tenant:
// "role/path" → reports counted.
func outcomes(t *testing.T, srv *testServer) map[string]int {
	t.Helper()
	req, err := http.NewRequest("GET", srv.http+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The API listener's /metrics takes a global operator's token.
	req.Header.Set("Authorization", "Bearer "+srv.tokens["operator"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	re := regexp.MustCompile(`(?m)^rendezvous_punch_outcomes_total\{tenant="demo/dev",role="(\w+)",path="(\w+)"\} (\d+)$`)
	for _, m := range re.FindAllStringSubmatch(string(body), -1) {
		n, _ := strconv.Atoi(m[3])
		out[m[1]+"/"+m[2]] = n
	}
	return out
}

// wantOutcomes checks that each side reported path exactly once and nothing
// else was counted.
func wantOutcomes(t *testing.T, srv *testServer, path string) {
	t.Helper()
	got := outcomes(t, srv)
	for k, n := range got {
		want := 0
		if k == "host/"+path || k == "client/"+path {
			want = 1
		}
		if n != want {
			t.Errorf("outcome %s counted %d times, want %d (all: %v)", k, n, want, got)
		}
	}
	if got["host/"+path] != 1 || got["client/"+path] != 1 {
		t.Errorf("outcomes %v: want host/%s and client/%s once each", got, path, path)
	}
}

// relayFlow publishes on hc, joins from jc (relay-only if asked) and
// punches both sides at once, returning both introductions, paths and
// errors.
func relayFlow(t *testing.T, ctx context.Context, srv *testServer, hc, jc *lossyConn, relayOnly bool, cfg PunchConfig) (hin, jin Introduction, hp, jp Path, herr, jerr error, pub *Publisher, j *Joiner) {
	t.Helper()
	pub, err := Publish(ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("relay"), Conn: hc})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	t.Cleanup(func() { pub.Close(context.Background()) })
	j, err = NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, Conn: jc, RelayOnly: relayOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	done := make(chan struct{})
	go func() {
		defer close(done)
		if hin, herr = pub.Accept(ctx); herr == nil {
			hp, herr = pub.Punch(ctx, hin, cfg)
		}
	}()
	jin, jp, jerr = j.JoinAndPunch(ctx, pub.ListingID(), cfg)
	<-done
	return hin, jin, hp, jp, herr, jerr, pub, j
}

// TestRelayFallbackLoopback: when no probe can pass directly (the wrappers
// drop every punch probe on the peers' own sockets), both sides fall back
// to the relay within one more punch timeout, report relayed paths to each
// other's relayed addresses on coturn, and exchange datagrams through it
// with Socket.WriteTo and ReadFrom.
func TestRelayFallbackLoopback(t *testing.T) {
	srv, tc := startRelayServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	hc, jc := newLossy(t), newLossy(t)
	noProbes := func(b []byte, _ netip.AddrPort) bool { return isProbe(b) }
	hc.setDrop(noProbes, nil)
	jc.setDrop(noProbes, nil)
	hin, jin, hp, jp, herr, jerr, pub, j := relayFlow(t, ctx, srv, hc, jc, false, PunchConfig{Timeout: time.Second})
	if herr != nil || jerr != nil {
		t.Fatalf("host: %v; joiner: %v", herr, jerr)
	}
	if jin.Public != hc.addr() || hin.Public != jc.addr() {
		t.Fatalf("a direct attempt introduces the peers' endpoints: joiner got %v, host got %v", jin.Public, hin.Public)
	}
	if !hp.Relayed || !jp.Relayed || hp.Peer.Addr() != tc.addr.Addr() || jp.Peer.Addr() != tc.addr.Addr() || hp.Peer == jp.Peer {
		t.Fatalf("paths: host %+v, joiner %+v; want both relayed to distinct addresses on %v", hp, jp, tc.addr.Addr())
	}
	exchange(t, ctx, j.Socket(), pub.Socket(), jp.Peer, "through the relay from the joiner")
	exchange(t, ctx, pub.Socket(), j.Socket(), hp.Peer, "through the relay from the host")
	// Each side reported its relayed outcome once; a second Punch on the
	// same introduction reports nothing more.
	if _, err := pub.Punch(ctx, hin, PunchConfig{Timeout: 200 * time.Millisecond}); err == nil {
		t.Log("a second punch found a path too") // the outcome count is what matters
	}
	wantOutcomes(t, srv, "relayed")
}

// TestRelayOnlyLoopback: a relay-only join connects through the relay
// although a direct path exists: neither introduction names an address,
// and no punch probe leaves either peer's own socket.
func TestRelayOnlyLoopback(t *testing.T) {
	srv, _ := startRelayServer(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	hc, jc := newLossy(t), newLossy(t)
	var directProbes atomic.Int64
	countProbes := func(b []byte, _ netip.AddrPort) bool {
		if isProbe(b) {
			directProbes.Add(1)
		}
		return false
	}
	hc.setDrop(countProbes, nil)
	jc.setDrop(countProbes, nil)
	hin, jin, hp, jp, herr, jerr, pub, j := relayFlow(t, ctx, srv, hc, jc, true, PunchConfig{Timeout: 2 * time.Second})
	if herr != nil || jerr != nil {
		t.Fatalf("host: %v; joiner: %v", herr, jerr)
	}
	if !hin.RelayOnly() || !jin.RelayOnly() || hin.Public.IsValid() || hin.Local.IsValid() || jin.Public.IsValid() || jin.Local.IsValid() {
		t.Fatalf("relay-only introductions carry addresses: host got %+v, joiner got %+v", hin, jin)
	}
	if !hp.Relayed || !jp.Relayed {
		t.Fatalf("paths: host %+v, joiner %+v; want relayed", hp, jp)
	}
	exchange(t, ctx, j.Socket(), pub.Socket(), jp.Peer, "private hello")
	wantOutcomes(t, srv, "relayed")
	if n := directProbes.Load(); n != 0 {
		t.Fatalf("%d punch probes left the peers' own sockets on a relay-only attempt", n)
	}
}

// TestRelayRefusedLoopback: a server whose secret is not the relay's hands
// out credentials the relay refuses; a relay-only punch fails on both sides
// with the typed ErrRelayRefused (TURN 401), not a timeout.
func TestRelayRefusedLoopback(t *testing.T) {
	srv, _ := startRelayServer(t, "a-secret-coturn-does-not-know")
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	cfg := PunchConfig{Timeout: 2 * time.Second}
	_, _, _, _, herr, jerr, _, _ := relayFlow(t, ctx, srv, newLossy(t), newLossy(t), true, cfg)
	for side, err := range map[string]error{"host": herr, "joiner": jerr} {
		var re *RelayError
		if !errors.Is(err, ErrRelayRefused) || !errors.As(err, &re) || re.Code != 401 {
			t.Errorf("%s: %v, want ErrRelayRefused with TURN 401", side, err)
		}
	}
	wantOutcomes(t, srv, "failed")
}
