package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// writeCommands are the commands a read must not run while nothing it
// could see is due.
var writeCommands = []string{"hset", "hdel", "hincrby", "zadd", "zrem", "zremrangebyscore", "del", "set", "sadd", "srem"}

// innerCommands runs fn and answers the Redis commands it caused, FCALL
// and its inner commands by name (INFO commandstats counts a function's
// redis.call too).
func innerCommands(t *testing.T, e *readEnv, fn func()) map[string]int {
	t.Helper()
	if err := e.c.Do(context.Background(), e.c.B().ConfigResetstat().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	fn()
	info, err := e.c.Do(context.Background(), e.c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	return commandCounts(t, info)
}

type readEnv struct {
	*faultEnv
	clock *engine.ManualClock
}

// TestSingleReadsAreFixedKeyReads: GetListing and AttemptStatus are one
// call each of a fixed number of key reads, the same with 3 listings as
// with 90, writing nothing while nothing they could see is due (the view
// is built in Go, not in the function); an attempt past its deadline is
// still answered from the tombstone a writing call's cleanup would make.
func TestSingleReadsAreFixedKeyReads(t *testing.T) {
	srv, c := dedicatedServer(t)
	clock := engine.NewManualClock()
	k := engine.RandomKeyring()
	s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "reads", Limits: engine.DefaultLimits().WholePools(), Keyring: k, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	e := &readEnv{faultEnv: &faultEnv{t: t, srv: srv, c: c, s: s, k: k}, clock: clock}
	ctx := context.Background()
	var views []engine.ListingView
	var attempts []engine.AttemptID
	grow := func(n int) {
		for len(views) < n {
			v, r, err := s.CreateListing(ctx, e.listingCmd())
			if err != nil || !r.OK() {
				t.Fatalf("CreateListing: %v %v", r.Outcome, err)
			}
			e.v = v
			if _, r, err := s.BindHostPresence(ctx, e.presenceCmd(1)); err != nil || !r.OK() {
				t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
			}
			a, r, err := s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: v.Tenant, Client: "client", ProtocolVersion: 1,
				IdempotencyKey: fmt.Sprintf("j%d", len(views)), Listing: v.ID})
			if err != nil || !r.OK() {
				t.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
			}
			views, attempts = append(views, v), append(attempts, a.ID)
		}
	}
	get := func() {
		v := views[len(views)/2]
		got, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID, Joinable: true})
		if err != nil || !r.OK() || got.ID != v.ID || !got.PresenceFresh || got.HostPublic != netipAP("203.0.113.10:4000") ||
			got.Spec == nil || got.Spec.DisplayName != "x" || got.PresenceInstance != s.InstanceID() {
			t.Fatalf("GetListing: %+v %v %v", got, r.Outcome, err)
		}
	}
	status := func() {
		i := len(views) / 2
		st, r, err := s.AttemptStatus(ctx, engine.GetAttempt{Tenant: views[i].Tenant, Subject: "client", Attempt: attempts[i]})
		if err != nil || !r.OK() || st.Attempt != attempts[i] || st.Listing != views[i].ID {
			t.Fatalf("AttemptStatus: %+v %v %v", st, r.Outcome, err)
		}
	}
	sum := func(m map[string]int) (n int) {
		for name, c := range m {
			if name != "fcall" {
				n += c
			}
		}
		return n
	}
	costs := map[string][2]int{}
	for round, n := range []int{3, 90} {
		grow(n)
		for _, read := range []struct {
			name string
			fn   func()
		}{{"GetListing", get}, {"AttemptStatus", status}} {
			m := innerCommands(t, e, read.fn)
			if m["fcall"] != 1 {
				t.Fatalf("%s at %d listings: %d function calls, want 1", read.name, n, m["fcall"])
			}
			for _, w := range writeCommands {
				if m[w] != 0 {
					t.Errorf("%s at %d listings wrote: %v", read.name, n, m)
				}
			}
			c := costs[read.name]
			c[round] = sum(m)
			costs[read.name] = c
			t.Logf("%s at %d listings: %d commands inside the call %v", read.name, n, c[round], m)
		}
	}
	for name, c := range costs {
		if c[0] != c[1] {
			t.Errorf("%s: %d commands at 3 listings, %d at 90: want the same", name, c[0], c[1])
		}
	}

	// Past the attempts' deadline and the presence's (the leases still
	// run), before any writing call: the status is the tombstone a writing
	// call's cleanup leaves, the listing is there with its presence ended
	// (still naming the instance it last reached) and not joinable.
	clock.Advance(engine.DefaultLimits().AttemptTTL + time.Second)
	i := len(views) / 2
	st, r, err := s.AttemptStatus(ctx, engine.GetAttempt{Tenant: views[i].Tenant, Subject: "client", Attempt: attempts[i]})
	if err != nil || !r.OK() || st.State != engine.AttemptExpired {
		t.Fatalf("AttemptStatus past the deadline: %+v %v %v, want expired", st, r.Outcome, err)
	}
	v := views[i+1]
	got, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID})
	if err != nil || !r.OK() || got.PresenceFresh || got.HostPublic.IsValid() || got.PresenceInstance != s.InstanceID() {
		t.Fatalf("GetListing after its presence ended: %+v %v %v", got, r.Outcome, err)
	}
	if _, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID, Joinable: true}); err != nil || r.Outcome != engine.NotFound {
		t.Fatalf("joinable GetListing after its presence ended: %v %v, want NotFound", r.Outcome, err)
	}
	clock.Advance(engine.DefaultLimits().LeaseTTL)
	if _, r, err := s.GetListing(ctx, engine.GetListing{Tenant: v.Tenant, Listing: v.ID}); err != nil || r.Outcome != engine.NotFound {
		t.Fatalf("GetListing after its lease ended: %v %v, want NotFound", r.Outcome, err)
	}
}
