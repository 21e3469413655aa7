package main

import (
	"flag"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// redisAcks is --redis-ack-replicas and --redis-ack-timeout: with --store
// redis, every write the HTTP API acknowledges (listing create, renew and
// delete, attempt create, revocations) is answered only once that many
// replicas hold it; otherwise 503 service_unavailable with the reason
// not_replicated, which the client retries (engine/redisstore/acks.go).
// Without it, a Sentinel promotion can lose writes acknowledged in the
// last moments before it.
type redisAcks struct {
	Replicas int
	Timeout  time.Duration
}

// maxAckReplicas bounds --redis-ack-replicas: a deployment runs one primary
// and a few replicas.
const maxAckReplicas = 8

// maxAckTimeout stays below the store's call timeout, which bounds the
// call and its WAIT together.
const maxAckTimeout = redisstore.DefaultTimeout / 2

func redisAckFlags(fs *flag.FlagSet, a *redisAcks) {
	fs.IntVar(&a.Replicas, "redis-ack-replicas", 0, "with --store redis, how many replicas must hold a write before the HTTP API acknowledges it (0..8; 0: the primary alone); the documented Sentinel deployment sets 1")
	fs.DurationVar(&a.Timeout, "redis-ack-timeout", redisstore.DefaultAckTimeout, "with --redis-ack-replicas, how long a write waits for its replicas before it is answered 503 service_unavailable (reason not_replicated) and retried by the client (10ms..1s)")
}

func (c *config) validateRedisAcks() error {
	a := c.RedisAcks
	if a.Replicas < 0 || a.Replicas > maxAckReplicas {
		return c.bad("redis-ack-replicas", "%d is not in 0..%d", a.Replicas, maxAckReplicas)
	}
	if a.Timeout < 10*time.Millisecond || a.Timeout > maxAckTimeout {
		return c.bad("redis-ack-timeout", "%v is not in 10ms..%v", a.Timeout, maxAckTimeout)
	}
	return nil
}
