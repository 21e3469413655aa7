package redistest

import (
	"context"
	"testing"
	"time"
)

// KillPrimaryUntilPromoted kills the primary, old (KillPrimary), and waits
// up to timeout until the sentinels agree on a promoted replica
// (WaitForPromotion): the unplanned failover a test stages. It fails tb if
// either step fails, and returns when the primary was killed and the new
// primary's address.
func (t *Topology) KillPrimaryUntilPromoted(tb testing.TB, old string, timeout time.Duration) (killed time.Time, promoted string) {
	tb.Helper()
	ctx := context.Background()
	if _, err := t.KillPrimary(ctx); err != nil {
		tb.Fatal(err)
	}
	killed = time.Now()
	promoted, err := t.WaitForPromotion(ctx, old, timeout)
	if err != nil {
		tb.Fatal(err)
	}
	return killed, promoted
}
