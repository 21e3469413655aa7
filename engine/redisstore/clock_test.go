package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestServerTimeIsTheClockAndNeverRunsBackwards: without the test hook,
// "now" is the Redis server's TIME; once a later time has been seen (a
// failover to a server whose clock lags), it is never run backwards.
func TestServerTimeIsTheClockAndNeverRunsBackwards(t *testing.T) {
	c := redisClient(t)
	ctx := context.Background()
	name := freshName()
	s, err := redisstore.New(ctx, redisstore.Config{Client: c, Name: name, Limits: engine.DefaultLimits(), Keyring: engine.RandomKeyring()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	cmd := engine.CreateListing{
		Tenant: engine.Tenant{Game: "g", Env: "e"}, Owner: "o", IdempotencyKey: "k1",
		Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4},
	}
	before := time.Now()
	v, r, err := s.CreateListing(ctx, cmd)
	after := time.Now()
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	// The server runs on this machine: its TIME lies between the two reads
	// (to the microsecond it reports).
	lo, hi := before.Add(engine.DefaultLeaseTTL).Truncate(time.Microsecond), after.Add(engine.DefaultLeaseTTL)
	if v.LeaseExpiresAt.Before(lo) || v.LeaseExpiresAt.After(hi) || v.LeaseTTL != engine.DefaultLeaseTTL {
		t.Fatalf("lease expires %v (ttl %v), want within [%v, %v]", v.LeaseExpiresAt, v.LeaseTTL, lo, hi)
	}
	// A time an hour ahead was seen before: the clock holds there.
	ahead := time.Now().Add(time.Hour)
	key := "rdv:{" + name + "}:meta"
	if err := c.Do(ctx, c.B().Hset().Key(key).FieldValue().FieldValue("clock", strconv.FormatInt(ahead.UnixMicro(), 10)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	cmd.IdempotencyKey = "k2"
	v, r, err = s.CreateListing(ctx, cmd)
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing: %v %v", r.Outcome, err)
	}
	if got, want := v.LeaseExpiresAt, ahead.Add(engine.DefaultLeaseTTL).Truncate(time.Microsecond); !got.Equal(want) {
		t.Fatalf("lease after the clock ran backwards expires %v, want %v", got, want)
	}
}
