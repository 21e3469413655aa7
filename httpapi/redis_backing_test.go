package httpapi

import (
	"context"
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// redisClient starts a redis-server of the test's own (redistest.Require)
// and connects a client to it, closed when the test ends.
func redisClient(t *testing.T) (*redistest.Server, rueidis.Client) {
	t.Helper()
	srv := redistest.Require(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("connecting to redis-server: %v", err)
	}
	t.Cleanup(c.Close)
	return srv, c
}

// redisBacking is a Redis store on a redis-server of the test's own, with
// the test limits and a keyring of its own: the server for outages, the
// client for counting calls.
type redisBacking struct {
	srv    *redistest.Server
	client rueidis.Client
	store  *redisstore.Store
	limits engine.Limits
	keys   *engine.Keyring
}

func newRedisBacking(t *testing.T) redisBacking {
	t.Helper()
	b := redisBacking{limits: testLimits(), keys: engine.RandomKeyring()}
	b.srv, b.client = redisClient(t)
	var err error
	b.store, err = redisstore.New(context.Background(), redisstore.Config{Client: b.client, Limits: b.limits, Keyring: b.keys})
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	return b
}

// harness runs the API on st: the backing's store, or one that wraps it.
func (b redisBacking) harness(t *testing.T, st engine.Store) *harness {
	t.Helper()
	return newHarness(t, b.limits, func(cfg *Config) { cfg.Store, cfg.Keys = st, b.keys })
}
