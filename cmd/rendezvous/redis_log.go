package main

import (
	"context"
	"strings"

	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// redisTarget is what the `redis store` start-up line says the store
// talks to: with Sentinel the sentinels, the master name and the primary
// they named at start (not --redis-addr, which is then unused), otherwise
// --redis-addr.
func redisTarget(c *config, rs *redisstore.Store) []any {
	if len(c.RedisSentinels) == 0 {
		return []any{"redis_addr", c.RedisAddr}
	}
	return []any{"redis_sentinels", strings.Join(c.RedisSentinels, ","), "redis_master", c.RedisMaster,
		"redis_primary", rs.Primary()}
}

// watchPrimary logs each promotion the store follows (Sentinel only) until
// the returned stop is called.
func (s *server) watchPrimary(c *config) {
	rs, ok := s.store.(*redisstore.Store)
	if !ok || len(c.RedisSentinels) == 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rs.WatchPrimary(ctx, s.log.With("component", "redisstore"), c.RedisMaster)
	}()
	s.stopWatch = func() {
		cancel()
		<-done
	}
}
