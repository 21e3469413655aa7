package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestE2EAcknowledgedMeansReplicated: an instance with --redis-ack-replicas 1
// on a primary without a replica answers a listing creation 503
// service_unavailable, reason not_replicated, Retry-After 1 (the primary
// applied it); once a replica follows, the client's retry with the same
// Idempotency-Key answers 201 with the listing the first call made (one
// listing in Redis, not two), and the replica holds it.
func TestE2EAcknowledgedMeansReplicated(t *testing.T) {
	redistest.SkipIfMissing(t)
	var srv [2]*redistest.Server
	var cl [2]rueidis.Client
	for i := range srv {
		s, err := redistest.StartWith("--repl-diskless-sync-delay", "0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, DisableCache: true, ForceSingleClient: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		srv[i], cl[i] = s, c
	}
	p := startProc(t, append(redisArgsFor(t, srv[0]), "--redis-ack-replicas", "1", "--redis-ack-timeout", "100ms")...)
	create := func() httpReply {
		return p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody("replicated"), "Idempotency-Key", "acked-1")
	}
	r := create()
	var pr struct{ Code, Reason string }
	if err := json.Unmarshal(r.body, &pr); err != nil || r.status != http.StatusServiceUnavailable ||
		pr.Code != "service_unavailable" || pr.Reason != "not_replicated" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("creation without a replica: %d %s (Retry-After %q), want 503 not_replicated", r.status, r.body, r.header.Get("Retry-After"))
	}

	ctx := context.Background()
	host, port, _ := net.SplitHostPort(srv[0].Addr)
	if err := cl[1].Do(ctx, cl[1].B().Replicaof().Host(host).Port(mustAtoi(t, port)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(hangGuard); ; time.Sleep(20 * time.Millisecond) {
		info, _ := cl[1].Do(ctx, cl[1].B().Info().Section("replication").Build()).ToString()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica does not follow the primary:\n%s", info)
		}
	}
	var got struct {
		ListingID string `json:"listing_id"`
	}
	r = create()
	if r.status != http.StatusCreated && r.status != http.StatusOK {
		t.Fatalf("the retried creation: %d %s, want the listing", r.status, r.body)
	}
	r.expect(t, "the retried creation", r.status, &got)
	keys, err := cl[0].Do(ctx, cl[0].B().Keys().Pattern("rdv:{e2e}:l:*").Build()).AsStrSlice()
	if err != nil || len(keys) != 1 || keys[0] != "rdv:{e2e}:l:"+got.ListingID {
		t.Fatalf("listings in Redis: %q %v; want exactly the one answered, %s", keys, err, got.ListingID)
	}
	if n, err := cl[1].Do(ctx, cl[1].B().Exists().Key(keys[0]).Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("the replica does not hold the acknowledged listing: %d %v", n, err)
	}
}
