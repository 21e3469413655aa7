package redisstore_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// BenchmarkWritingCallRenew is a writing call's cost on the server with few
// records, so that under callgrind (RDV_CALLGRIND, about fifty times
// slower) the set-up stays short and redis-instr/op shows what every
// writing call pays besides its own work (the primary check of
// scripts/prelude/60_cleanup.lua among it):
//
//	RDV_CALLGRIND=$(mktemp -d) go test -run '^$' -bench WritingCall -benchtime 300x ./engine/redisstore/
func BenchmarkWritingCallRenew(b *testing.B) {
	b.Run("replicas=0", func(b *testing.B) { benchWritingCallRenew(b, 0) })
	b.Run("replicas=2", func(b *testing.B) { benchWritingCallRenew(b, 2) })
}

// benchWritingCallRenew renews one listing on a primary with n replicas
// (whose lines INFO replication lists).
func benchWritingCallRenew(b *testing.B, n int) {
	srv, c := dedicatedServerB(b)
	host, port, _ := net.SplitHostPort(srv.Addr)
	for range n {
		r, err := redistest.StartWith("--replicaof", host, port)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(r.Stop)
	}
	for deadline := time.Now().Add(time.Minute); n > 0; time.Sleep(50 * time.Millisecond) {
		info, _ := c.Do(context.Background(), c.B().Info().Section("replication").Build()).ToString()
		if strings.Count(info, "state=online") == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the replicas are not online:\n%s", info)
		}
	}
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Limits: engine.DefaultLimits(), Keyring: k, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{srv: srv, c: c, s: s, k: k}
	v, r, err := s.CreateListing(context.Background(), benchListing(0))
	if err != nil || !r.OK() {
		b.Fatalf("%v %v", r.Outcome, err)
	}
	lc := k.Lease(v.Lease)
	ver := v.Version
	e.run(b, 1, func(int) {
		rv, r, err := s.RenewLease(context.Background(), engine.RenewLease{Tenant: benchTenant, Owner: v.Owner, Listing: v.ID,
			Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: ver, CurrentPlayers: -1})
		if err != nil || !r.OK() {
			b.Fatalf("%v %v", r.Outcome, err)
		}
		ver = rv.Version
	})
}
