package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// Stores --store selects.
const (
	storeMemory = "memory"
	storeRedis  = "redis"
)

// openStore makes the store --store selects: the in-memory one, or the
// Redis one on --redis-addr or the primary --redis-sentinel names
// (database --redis-db, AUTH with the password of --redis-password-file)
// under --redis-name. close releases what it holds (the Redis connection).
func openStore(c *config, keys *engine.Keyring) (store engine.Store, close func(), err error) {
	if c.Store != storeRedis {
		s, err := memstore.New(c.Limits, engine.NewSystemClock(), keys)
		if err != nil {
			return nil, nil, fmt.Errorf("cannot create the store: %w", err)
		}
		return s, func() {}, nil
	}
	opt, setting := redisClientOption(c)
	client, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, nil, &settingError{setting, c.sourceOf(setting), fmt.Errorf("cannot connect to Redis: %w", err)}
	}
	s, err := redisstore.New(context.Background(), redisstore.Config{
		Client: client, Name: c.RedisName, Limits: c.Limits, Keyring: keys,
		InstanceLease: c.InstanceLease, Logger: slog.Default().With("component", "redisstore"),
		AckReplicas: c.RedisAcks.Replicas, AckTimeout: c.RedisAcks.Timeout,
	})
	if err != nil {
		client.Close()
		return nil, nil, &settingError{setting, c.sourceOf(setting), err}
	}
	return s, client.Close, nil
}
