package redisstore_test

import (
	"context"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// TestRedisStoreContractThroughSentinel runs the whole store contract suite
// on the Redis store reaching its primary through Sentinel (three
// sentinels, two replicas, min-replicas-to-write 1 as documented): the
// Sentinel client and a primary that takes writes only while a replica
// keeps up change no answer of the contract.
func TestRedisStoreContractThroughSentinel(t *testing.T) {
	_, c := sentinelTopology(t, redistest.SentinelOptions{})
	storetest.Run(t, func(t *testing.T, l engine.Limits, clock *engine.ManualClock, k *engine.Keyring) engine.Store {
		t.Helper()
		s, err := redisstore.New(context.Background(), redisstore.Config{
			Client: c, Name: freshName(), Limits: l, Keyring: k, Clock: clock,
		})
		if err != nil {
			t.Fatalf("redisstore.New: %v", err)
		}
		return s
	})
}
