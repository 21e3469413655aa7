package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// sentinelArgs returns the flags that put a server on top's primary
// through its sentinels, authenticating with top's password.
func sentinelArgs(t *testing.T, top *redistest.Topology) []string {
	t.Helper()
	dir := t.TempDir()
	key, pw := filepath.Join(dir, "capability.key"), filepath.Join(dir, "redis-password")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pw, []byte(top.Options.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--store", "redis", "--redis-sentinel", strings.Join(top.SentinelAddrs(), ","),
		"--redis-master", redistest.MasterName, "--redis-password-file", pw,
		"--redis-name", "e2e", "--capability-key-file", key}
}

// TestE2ERedisSentinelFailover: the binary on a Sentinel-managed Redis
// (authenticating to the sentinels and the nodes with one password file)
// serves a listing, a join and its introduction; the primary is killed
// (SIGKILL); once a replica is promoted the same process serves again
// without a restart: the listing is still there, its host's presence
// refreshes, a new join is introduced, and an attempt created under the old
// primary is refused (typed) instead of introduced.
func TestE2ERedisSentinelFailover(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Password: "e2e-sentinel-pass-0123456789"})
	p := startProc(t, sentinelArgs(t, top)...)
	h := publishHost(t, p, "sentinel-1", "Sentinel host")
	j := p.join("sentinel-join-1", h.pub.ListingID)
	h.offered(mustHandle(t, j.Handle))
	introduce(t, h, newPeer(t, j.Mediator), j)
	// An attempt the host has bound but the client has not: after the
	// promotion it is void.
	old := p.join("sentinel-join-2", h.pub.ListingID)
	h.offered(mustHandle(t, old.Handle))
	oldHandle := mustHandle(t, old.Handle)

	ctx := context.Background()
	primary, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := top.Do(ctx, primary, "WAIT", "2", "5000"); err != nil {
		t.Fatalf("WAIT: %v", err)
	}
	killed, promotedAddr := top.KillPrimaryUntilPromoted(t, primary, 60*time.Second)
	promoted := time.Since(killed)
	waitReady(t, p, http.StatusOK, `{"status":"ready"}`)
	t.Logf("the primary killed: promoted after %v, ready after %v", promoted.Round(10*time.Millisecond), time.Since(killed).Round(10*time.Millisecond))

	p.call("GET", "/v1/listings/"+h.pub.ListingID, p.tokens["client"], nil).expect(t, "get after the promotion", http.StatusOK, nil)
	h.refresh()
	j3 := p.join("sentinel-join-3", h.pub.ListingID)
	h.offered(mustHandle(t, j3.Handle))
	introduce(t, h, newPeer(t, j3.Mediator), j3)

	clientCap := mustToken(t, old.Token)
	c := newPeer(t, old.Mediator)
	c.request(stun.KindAttemptClient, oldHandle, &clientCap, 0, clientLAN)
	if m := c.read(); m.Type() != stun.BindingError {
		t.Fatalf("a client bind of an attempt made under the old primary answered type %#x, want an error", m.Type())
	} else if code, _, _ := m.ErrorCode(); code != stun.CodeNotFound {
		t.Fatalf("a client bind of an attempt made under the old primary answered error %d, want 404 (the attempt is gone)", code)
	}
	if strings.Contains(p.stderr.String(), top.Options.Password) {
		t.Fatalf("the server's log holds the Redis password")
	}
	checkSentinelLogs(t, p, top.SentinelAddrs(), redistest.MasterName, primary, promotedAddr)
}

// TestE2ERedisSentinelUnreachable: with no sentinel answering, the server
// does not start, names --redis-sentinel and never prints the password.
func TestE2ERedisSentinelUnreachable(t *testing.T) {
	redistest.SkipIfMissing(t)
	top := &redistest.Topology{Options: redistest.SentinelOptions{Password: "e2e-unreachable-pass-0123"}}
	args := sentinelArgs(t, top)
	for i, a := range args {
		if a == "--redis-sentinel" {
			args[i+1] = "127.0.0.1:1" // nothing listens on port 1
		}
	}
	code, stdout, stderr := runBinary(t, nil, append([]string{"--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, args...)...)
	if code != exitFailure || !strings.Contains(stderr, "redis-sentinel") {
		t.Fatalf("exit %d, want %d naming redis-sentinel:\n%s", code, exitFailure, stderr)
	}
	if strings.Contains(stdout+stderr, top.Options.Password) {
		t.Fatalf("the output holds the password:\n%s", stderr)
	}
}
