package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// redisStoreArgs starts a redis-server for t and returns the flags that put
// a server on it, with a capability key file every instance shares.
func redisStoreArgs(t *testing.T) []string {
	t.Helper()
	srv := redistest.Require(t)
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--store", "redis", "--redis-addr", srv.Addr, "--redis-name", "e2e", "--capability-key-file", key}
}

// TestE2EFlowRedis runs the whole end-to-end flow (publish, presence,
// browse, join, OFFER, introduction, delete, drain) on the Redis store.
func TestE2EFlowRedis(t *testing.T) { e2eFlow(t, redisStoreArgs(t)...) }

// TestE2ETwoInstancesShareRedis: a listing published through one instance
// is read, browsed and joined through another on the same Redis, and the
// lease token one issued renews through the other.
func TestE2ETwoInstancesShareRedis(t *testing.T) {
	args := redisStoreArgs(t)
	a, b := startProc(t, args...), startProc(t, args...)
	h := publishHost(t, a, "shared-1", "Shared host")
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
