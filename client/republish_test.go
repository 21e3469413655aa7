package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventLog collects a Publisher's events for a test.
type eventLog struct{ ch chan Event }

func newEventLog() *eventLog { return &eventLog{ch: make(chan Event, 256)} }

func (l *eventLog) on(ev Event) {
	select {
	case l.ch <- ev:
	default: // a test reading nothing more must not block the Publisher
	}
}

// await returns the next event of kind, failing on EventStopped (unless
// that is the kind awaited) or when ctx ends.
func (l *eventLog) await(t *testing.T, ctx context.Context, kind EventKind) Event {
	t.Helper()
	for {
		select {
		case ev := <-l.ch:
			t.Logf("event: %v", ev)
			if ev.Kind == kind {
				return ev
			}
			if ev.Kind == EventStopped {
				t.Fatalf("the publisher stopped while waiting for %v: %v", kind, ev.Err)
			}
		case <-ctx.Done():
			t.Fatalf("no %v event: %v", kind, ctx.Err())
		}
	}
}

// fileServer starts the server with a principals file (so tokens survive a
// restart) and extra flags; restart starts it again on the same ports.
type fileServer struct {
	file  string
	extra []string
	*testServer
}

func startFileServer(t *testing.T, extra ...string) *fileServer {
	t.Helper()
	tokens := map[string]string{"publisher": "republish-test-publisher-token",
		"client": "republish-test-client-token-01", "operator": "republish-test-operator-token"}
	var entries []string
	for role, tok := range tokens {
		// The operator drains the instance, so it is a global one.
		game, env := "demo", "dev"
		if role == "operator" {
			game, env = "*", "*"
		}
		sum := sha256.Sum256([]byte(tok))
		entries = append(entries, `{"subject":"file-`+role+`","game_id":"`+game+`","environment_id":"`+env+`","roles":["`+role+
			`"],"token_sha256":"`+hex.EncodeToString(sum[:])+`"}`)
	}
	file := filepath.Join(t.TempDir(), "principals.json")
	if err := os.WriteFile(file, []byte(`{"principals":[`+strings.Join(entries, ",")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := &fileServer{file: file, extra: extra}
	fs.testServer = startServer(t, nil, append([]string{"--principals", file, "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, extra...)...)
	fs.tokens = tokens
	return fs
}

// restart starts a new process on the ports the current one bound.
func (fs *fileServer) restart(t *testing.T) {
	t.Helper()
	tokens := fs.tokens
	httpAddr := strings.TrimPrefix(fs.http, "http://")
	fs.testServer = startServer(t, nil, append([]string{"--principals", fs.file, "--http-addr", httpAddr,
		"--udp-addr", fs.mediator.String()}, fs.extra...)...)
	fs.tokens = tokens
}

func (fs *fileServer) kill(t *testing.T) {
	t.Helper()
	if err := fs.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-fs.exited
}

// browsable reports whether id is in the tenant's browse.
func browsable(t *testing.T, ctx context.Context, api *API, id ListingID) bool {
	t.Helper()
	for l, err := range api.Browse(ctx, BrowseQuery{ProtocolVersion: 7}) {
		if err != nil {
			t.Fatalf("browse: %v", err)
		}
		if l.ListingID == id {
			return true
		}
	}
	return false
}

var fastRepublish = Backoff{Min: 100 * time.Millisecond, Max: 400 * time.Millisecond}

// publishWatched publishes cfg with its events in the returned log and the
// fast republish backoff; the caller closes the publisher.
func publishWatched(t *testing.T, ctx context.Context, cfg PublisherConfig) (*Publisher, *eventLog) {
	t.Helper()
	events := newEventLog()
	cfg.OnEvent, cfg.Republish = events.on, fastRepublish
	pub, err := Publish(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pub, events
}

// TestPublisherRepublishesAfterRestart: the server is killed (nothing
// drained, every listing lost) and started again on the same ports. The
// Publisher reports the silence, then the loss, publishes again by itself,
// and the new listing is browsable. On the memory store only: that a
// restart loses every listing is what it tests (on the Redis store the
// listing outlives the process, TestHARedisKilledMidLoad in
// cmd/rendezvous).
func TestPublisherRepublishesAfterRestart(t *testing.T) {
	// A lease far longer than the presence round's timeout: the silence is
	// noticed by the heartbeat, before any renewal is due.
	srv := startFileServer(t, "--presence-ttl", "3s", "--lease-ttl", "30s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
	defer cancel()
	pub, events := publishWatched(t, ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("restart"), ListenAddr: "127.0.0.1:0"})
	defer pub.Close(context.Background())
	first := pub.ListingID()

	srv.kill(t)
	if ev := events.await(t, ctx, EventUnreachable); ev.Listing != first || !errors.Is(ev.Err, ErrMediatorTimeout) {
		t.Fatalf("unreachable event %v", ev)
	}
	srv.restart(t)
	if ev := events.await(t, ctx, EventLeaseLost); ev.Listing != first || !errors.Is(ev.Err, ErrLeaseLost) || !errors.Is(ev.Err, ErrNotFound) {
		t.Fatalf("lease lost event %v, want listing %v, ErrLeaseLost and ErrNotFound", ev, first)
	}
	ev := events.await(t, ctx, EventRepublished)
	if ev.Listing == first || ev.Listing != pub.ListingID() || pub.Err() != nil {
		t.Fatalf("republished %v; publisher listing %v (first %v), err %v", ev.Listing, pub.ListingID(), first, pub.Err())
	}
	if !browsable(t, ctx, srv.api(t, "client"), ev.Listing) {
		t.Fatal("the republished listing is not browsable")
	}
	// The new listing is served like the first: a joiner gets through.
	j, err := NewJoiner(JoinerConfig{API: srv.api(t, "client"), ProtocolVersion: 7, ListenAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Join(ctx, pub.ListingID()); err != nil {
		t.Fatalf("join the republished listing: %v", err)
	}
	if _, err := pub.Accept(ctx); err != nil {
		t.Fatalf("accept on the republished listing: %v", err)
	}
}

// TestPublisherRepublishesAfterDrain: an operator drain is reported as
// such; the Publisher keeps trying (each refusal named ErrDraining) and
// returns once a new process serves on the same ports, on either store (on
// Redis the drain is in the shared state: the new process ends it).
func TestPublisherRepublishesAfterDrain(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv := startFileServer(t, append(storeArgs, "--presence-ttl", "3s", "--lease-ttl", "2s", "--drain-window", "1s")...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*hangGuard)
		defer cancel()
		pub, events := publishWatched(t, ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("drain-again"), ListenAddr: "127.0.0.1:0"})
		defer pub.Close(context.Background())
		first := pub.ListingID()
		if err := srv.api(t, "operator").Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if ev := events.await(t, ctx, EventDraining); ev.Listing != first || !errors.Is(ev.Err, ErrDraining) || !strings.Contains(ev.Err.Error(), "draining") {
			t.Fatalf("draining event %v", ev)
		}
		if ev := events.await(t, ctx, EventRepublishFailed); !errors.Is(ev.Err, ErrDraining) || ev.RetryIn <= 0 {
			t.Fatalf("republish failed event %v, want ErrDraining and a wait", ev)
		}
		if err := srv.stop(); err != nil {
			t.Fatal(err)
		}
		srv.restart(t)
		ev := events.await(t, ctx, EventRepublished)
		if ev.Listing == first || !browsable(t, ctx, srv.api(t, "client"), ev.Listing) {
			t.Fatalf("republished %v (first %v) is not browsable", ev.Listing, first)
		}
	})
}

// TestPublisherStopsWhenRevoked: a revoked principal cannot publish again,
// so the Publisher stops, and says "revoked" (it used to report the
// mediator's "404 Not Found").
func TestPublisherStopsWhenRevoked(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		srv, ctx := startLoopback(t, storeArgs, "--presence-ttl", "3s")
		pub, events := publishWatched(t, ctx, PublisherConfig{API: srv.api(t, "publisher"), Spec: testSpec("revoked-principal"), Conn: newLossy(t)})
		defer pub.Close(context.Background())
		body := struct {
			Subject string `json:"subject"`
			TTL     int    `json:"ttl_s"`
		}{"dev-publisher", 60}
		if err := srv.api(t, "operator").do(ctx, &call{op: "revoke", method: "POST", path: "/v1/admin/revocations", body: &body}); err != nil {
			t.Fatalf("revoke: %v", err)
		}
		ev := events.await(t, ctx, EventStopped)
		<-pub.Done()
		err := pub.Err()
		if ev.Err != err || !errors.Is(err, ErrRevoked) || !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "revoked") ||
			strings.Contains(err.Error(), "Not Found") {
			t.Fatalf("publisher error %v (event %v), want one that says revoked", err, ev)
		}
		if _, err := pub.Accept(ctx); !errors.Is(err, ErrRevoked) {
			t.Fatalf("Accept after revocation: %v, want ErrRevoked", err)
		}
		for len(events.ch) > 0 {
			if ev := <-events.ch; ev.Kind == EventRepublished || ev.Kind == EventRepublishFailed {
				t.Fatalf("a revoked publisher tried to publish again: %v", ev)
			}
		}
	})
}
