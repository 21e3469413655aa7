package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestAckedCreateLatency measures what waiting for a replica costs a
// listing creation: on a Sentinel topology (a primary, two replicas, on
// loopback), two stores on one client, one with AckReplicas 1 and one
// without, create listings in alternating rounds (so both see the same
// machine load), and the test logs p50 and p99 of each:
//
//	RDV_REQUIRE_REDIS=1 go test -run TestAckedCreateLatency -v ./engine/redisstore/
//
// It fails only when an acknowledged creation is not confirmed.
func TestAckedCreateLatency(t *testing.T) {
	_, c := sentinelTopology(t, redistest.SentinelOptions{})
	l := engine.DefaultLimits()
	l.MaxListings, l.OwnerListingQuota, l.TenantListingQuota = 100_000, 100_000, 100_000
	l.MaxIdempotency, l.TenantIdempotencyQuota, l.SubjectIdempotencyQuota = 200_000, 200_000, 200_000
	stores := [2]*redisstore.Store{}
	for i, acks := range []int{0, 1} {
		var err error
		if stores[i], err = redisstore.New(context.Background(), redisstore.Config{Client: c, Name: fmt.Sprintf("cost%d", i),
			Limits: l, Keyring: engine.RandomKeyring(), AckReplicas: acks}); err != nil {
			t.Fatal(err)
		}
	}
	const rounds, perRound = 20, 100
	var lat [2][]time.Duration
	for r := range rounds {
		for i, s := range stores {
			for k := range perRound {
				cmd := benchListing(r*perRound + k)
				start := time.Now()
				_, res, err := s.CreateListing(context.Background(), cmd)
				d := time.Since(start)
				if err != nil || !res.OK() {
					t.Fatalf("CreateListing (acks %d): %+v %v", i, res, err)
				}
				lat[i] = append(lat[i], d)
			}
		}
	}
	p := func(v []time.Duration, q float64) time.Duration {
		s := slices.Clone(v)
		slices.Sort(s)
		return s[int(q*float64(len(s)-1))]
	}
	for i, name := range []string{"primary only", "a replica confirms (WAIT 1)"} {
		t.Logf("create, %s: p50 %v p99 %v (%d calls)", name, p(lat[i], 0.5).Round(time.Microsecond),
			p(lat[i], 0.99).Round(time.Microsecond), len(lat[i]))
	}
}
