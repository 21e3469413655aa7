package main

import (
	"context"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// redisServerArgs starts a redis-server of t's own (for a test that reads
// the server's own counters) and returns it with the flags that put a
// server on it.
func redisServerArgs(t *testing.T) (*redistest.Server, []string) {
	t.Helper()
	srv := redistest.Require(t)
	return srv, redisArgsFor(t, srv)
}

// redisArgsFor returns the flags that put a server on srv.
func redisArgsFor(t testing.TB, srv *redistest.Server) []string {
	t.Helper()
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--store", "redis", "--redis-addr", srv.Addr, "--redis-name", "e2e", "--capability-key-file", key}
}

// TestE2ETwoInstancesShareRedis: a listing published through one instance
// is read, browsed and joined through another on the same Redis, and the
// lease token one issued renews through the other. Its metrics name the
// store.
func TestE2ETwoInstancesShareRedis(t *testing.T) {
	args := redisStoreArgs(t)
	a, b := startProc(t, append(args, "--metrics-addr", "127.0.0.1:0")...), startProc(t, args...)
	h := publishRouted(t, a, "shared-1")
	m := scrapeURL(t, "http://"+metricsAddr(t, a)+"/metrics").text
	if !strings.Contains(m, `store="redis"}`) || !strings.Contains(m, "rendezvous_available 1") {
		t.Fatalf("metrics of a Redis instance do not say store redis and available:\n%s", m)
	}
	var page browsePage
	b.call("GET", "/v1/listings?protocol_version=7", b.tokens["client"], nil).expect(t, "browse on b", http.StatusOK, &page)
	if len(page.Items) != 1 || page.Items[0].ListingID != h.pub.ListingID {
		t.Fatalf("browse on the second instance: %+v, want listing %s", page, h.pub.ListingID)
	}
	j := b.join("shared-join-1", h.pub.ListingID)
	if j.Handle == "" {
		t.Fatalf("join on the second instance returned no attempt")
	}
	b.call("PUT", "/v1/listings/"+h.pub.ListingID+"/lease", b.tokens["publisher"],
		map[string]any{"lease_id": h.pub.Lease.LeaseID, "lease_token": h.pub.Lease.Token, "expected_version": 1}).
		expect(t, "renew on b", http.StatusOK, nil)
	a.call("DELETE", "/v1/listings/"+h.pub.ListingID, a.tokens["publisher"], nil,
		"Lease-Id", h.pub.Lease.LeaseID, "Lease-Token", h.pub.Lease.Token).expect(t, "delete on a", http.StatusNoContent, nil)
	if code := b.call("GET", "/v1/listings/"+h.pub.ListingID, b.tokens["client"], nil).problemCode(t); code != "not_found" {
		t.Fatalf("get on b after delete on a: %q, want not_found", code)
	}
}

// TestE2EForgedFloodNeverReachesRedis: datagrams whose capability does not
// verify (made-up presence, host-attempt and client-attempt handles, and a
// real presence handle with a wrong key) are refused without a Redis call:
// only the host's one genuine refresh after the flood reaches Redis.
func TestE2EForgedFloodNeverReachesRedis(t *testing.T) {
	srv, args := redisServerArgs(t)
	// One socket: the flood and the genuine refresh are read in order. A
	// long instance lease keeps its registry renewals (FCALLs too) out of
	// the count.
	p := startProc(t, append(args, "--instance-lease", "60s", "--udp-sockets", "1", "--udp-error-rate", "1000000", "--udp-error-burst", "1000000")...)
	h := publishHost(t, p, "flood-1", "Flood host")
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	fcalls := func() int {
		info, err := rc.Do(context.Background(), rc.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		calls, _ := redistest.CommandStat(info, "fcall")
		return int(calls)
	}
	before := fcalls()
	forger := newPeer(t, p.mediator)
	refused := func(u *udpPeer) {
		t.Helper()
		if m := u.read(); m.Type() != stun.BindingError {
			t.Fatalf("a forged datagram answered type %#x, want an error", m.Type())
		}
	}
	const n = 300
	for i := 0; i < n; i++ { // one at a time: answers never overflow the socket buffer
		var key engine.Capability
		if _, err := rand.Read(key[:]); err != nil {
			t.Fatal(err)
		}
		made := engine.Handle{UUID: engine.NewUUID()}
		forger.request(stun.KindPresence, made, &key, uint64(i+1), hostLAN)
		refused(forger)
		forger.request(stun.KindAttemptHost, made, &key, 0, hostLAN)
		refused(forger)
		forger.request(stun.KindAttemptClient, made, &key, 0, clientLAN)
		refused(forger)
		h.peer.request(stun.KindPresence, h.presence, &key, uint64(i+100), hostLAN)
		refused(h.peer)
	}
	h.seq = 1000
	h.refresh() // genuine: the one call that reaches Redis
	if got := fcalls() - before; got != 1 {
		t.Fatalf("%d forged datagrams and one genuine refresh made %d Redis calls, want 1", 4*n, got)
	}
}
