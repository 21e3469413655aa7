package redisstore

import (
	"context"
	"fmt"
)

// migratePresence converts the presence records an older library wrote
// to this one's layout (scripts/migrate_presence.lua), a chunk per call,
// so no call blocks Redis for long; a deployment already converted
// answers at once. New runs it before the store serves: an instance of
// the older build must not run beside it (docs/deployment.md, another
// library).
func (s *Store) migratePresence(ctx context.Context) error {
	for cursor := "0"; ; {
		cctx, cancel := context.WithTimeout(ctx, s.timeout)
		next, err := s.c.Do(cctx, s.command("rdv_migrate_presence", s.now(), []string{cursor})).ToString()
		cancel()
		if err != nil {
			return fmt.Errorf("redisstore: converting presence records: %w", err)
		}
		if next == "0" {
			return nil
		}
		cursor = next
	}
}
