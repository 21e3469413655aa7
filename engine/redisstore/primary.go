package redisstore

import (
	"context"
	"log/slog"
	"time"
)

// primaryWatchEvery is how often WatchPrimary looks at the node the client
// sends to. It reads the client's own state, never Redis, so it can look
// often: a promotion is logged within this of the client following it.
const primaryWatchEvery = 100 * time.Millisecond

// Primary is the address the store's client sends commands to now: under
// Sentinel the primary the sentinels named last, otherwise the one server.
func (s *Store) Primary() string { return s.sendsTo() }

// WatchPrimary logs, once each, every change of the primary the client
// follows (a Sentinel promotion), naming the new primary and the one it
// replaced, until ctx ends. It starts from the primary at the call.
func (s *Store) WatchPrimary(ctx context.Context, log *slog.Logger, master string) {
	last := s.sendsTo()
	t := time.NewTicker(primaryWatchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Between two primaries the client may briefly hold none: the
		// change is logged when it holds the new one.
		now := s.sendsTo()
		if now == "" || now == last {
			continue
		}
		log.Warn("following the Redis primary the sentinels promoted", "redis_master", master, "redis_primary", now, "previous", last)
		last = now
	}
}
