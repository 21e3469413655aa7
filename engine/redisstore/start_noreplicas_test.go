package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestStartWaitsForInSyncReplicas: a primary that refuses writes for want
// of in-sync replicas (NOREPLICAS, as while a replica lags past
// min-replicas-max-lag) does not fail a starting store at once: it starts
// once the primary takes writes again.
func TestStartWaitsForInSyncReplicas(t *testing.T) {
	_, c := dedicatedServer(t)
	ctx := context.Background()
	set := func(n string) {
		t.Helper()
		if err := c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("min-replicas-to-write", n).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	cfg := redisstore.Config{Client: c, Name: "lagging", Limits: engine.DefaultLimits(), Keyring: engine.RandomKeyring()}
	// A first instance loads the function library, as a running
	// deployment has it.
	if _, err := redisstore.New(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	set("1") // no replica at all: every write is refused
	const refusedFor = 500 * time.Millisecond
	time.AfterFunc(refusedFor, func() { set("0") })
	start := time.Now()
	s, err := redisstore.New(ctx, cfg)
	if err != nil {
		t.Fatalf("New while the primary refused writes for %v: %v", refusedFor, err)
	}
	if took := time.Since(start); took < refusedFor {
		t.Fatalf("New returned after %v, before the primary took writes (%v): it did not meet the refusal", took, refusedFor)
	}
	if !s.Available() {
		t.Fatal("the started store is not available")
	}
}
