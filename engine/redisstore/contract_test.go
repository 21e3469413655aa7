package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// newContractStore is the storetest.Factory for the Redis store: a fresh
// deployment name on the shared server, "now" from the suite's clock.
func newContractStore(t *testing.T, l engine.Limits, c *engine.ManualClock, k *engine.Keyring) engine.Store {
	t.Helper()
	s, err := redisstore.New(context.Background(), redisstore.Config{
		Client: redisClient(t), Name: freshName(), Limits: l, Keyring: k, Clock: c,
	})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	return s
}

// TestRedisStoreContract runs the whole store contract suite on the Redis
// store against a real redis-server.
func TestRedisStoreContract(t *testing.T) {
	storetest.Run(t, newContractStore)
}

// FuzzRedisStoreOps drives the Redis store through fuzzer-chosen operation
// sequences (the seeds run with every go test): go test -run '^$' -fuzz
// FuzzRedisStoreOps -fuzztime 30s -fuzzminimizetime 2s ./engine/redisstore/
func FuzzRedisStoreOps(f *testing.F) {
	storetest.Fuzz(f, newContractStore)
}
