package redisstore

import (
	"context"
	"fmt"
	"time"
)

// startWriteWait bounds how long a starting store waits for a primary
// that refuses writes for want of in-sync replicas (NOREPLICAS): a
// replica that lags past min-replicas-max-lag for a moment, under load or
// just after a failover, must not fail the start of every instance.
const startWriteWait = 10 * time.Second

// migratePresence converts the presence records an older library wrote
// to this one's layout (scripts/migrate_presence.lua), a chunk per call,
// so no call blocks Redis for long; a deployment already converted
// answers at once. New runs it before the store serves: an instance of
// the older build must not run beside it (docs/deployment.md, another
// library).
func (s *Store) migratePresence(ctx context.Context) error {
	var refused time.Time
	for cursor := "0"; ; {
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		next, err := s.c.Do(cctx, s.command("rdv_migrate_presence", s.now(), []string{cursor})).ToString()
		cancel()
		if kind, _ := refusalKindOf(err); err != nil && kind == "NOREPLICAS" {
			if refused.IsZero() {
				refused = time.Now()
			}
			if time.Since(refused) < startWriteWait {
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
					continue
				}
			}
		}
		if err != nil {
			return fmt.Errorf("redisstore: converting presence records: %w", err)
		}
		if next == "0" {
			return nil
		}
		cursor = next
	}
}
