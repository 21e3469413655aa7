package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// Principals reloads reach every instance through one key, "<prefix>principals:reload":
// the instance asked to reload (SIGHUP, the reload route) sets it to a
// value of its own after it reloaded, and every instance reads it a few
// times a second (PrincipalsReloadMark) and reloads its own file when it
// changed. A key read by a background poll, not a message: pub/sub would
// lose the reload for an instance reconnecting at that moment, and the key
// costs one GET per poll and instance, never a call on a request's way.
// After a Sentinel promotion the key may read as an older value: the
// instances reload once more, which changes nothing.

func (s *Store) principalsReloadKey() string { return s.prefix + "principals:reload" }

// PrincipalsReloadMark is the deployment's current reload mark; "" when no
// reload was ever announced.
func (s *Store) PrincipalsReloadMark(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, err := s.c.Do(ctx, s.c.B().Get().Key(s.principalsReloadKey()).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	return v, err
}

// AnnouncePrincipalsReload sets a new reload mark (this instance's ID and
// the time) and returns it: every other instance reloads its principals
// at its next poll.
func (s *Store) AnnouncePrincipalsReload(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	mark := s.id.String() + " " + strconv.FormatInt(time.Now().UnixNano(), 10)
	return mark, s.c.Do(ctx, s.c.B().Set().Key(s.principalsReloadKey()).Value(mark).Build()).Error()
}
