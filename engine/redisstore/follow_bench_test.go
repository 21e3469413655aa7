package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// BenchmarkWritingCallRenew is a writing call's cost on the server with few
// records, so that under callgrind (RDV_CALLGRIND, about fifty times
// slower) the set-up stays short and redis-instr/op shows what every
// writing call pays besides its own work (the primary check of
// scripts/prelude/60_cleanup.lua among it):
//
//	RDV_CALLGRIND=$(mktemp -d) go test -run '^$' -bench WritingCall -benchtime 300x ./engine/redisstore/
func BenchmarkWritingCallRenew(b *testing.B) {
	srv, c := dedicatedServerB(b)
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
