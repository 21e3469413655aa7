package redistest

import (
	"context"
	"testing"

	"github.com/redis/rueidis"
)

// ReportFCallCost reports the server's time per FCALL since the last CONFIG
// RESETSTAT, from INFO commandstats on c: redis-us/op, and redis-us/refresh
// per inner operation when each call carries inner of them.
func ReportFCallCost(b *testing.B, c rueidis.Client, inner int) {
	b.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		b.Fatal(err)
	}
	if calls, usec := CommandStat(info, "fcall"); calls > 0 {
		b.ReportMetric(usec/calls, "redis-us/op")
		if inner > 1 {
			b.ReportMetric(usec/calls/float64(inner), "redis-us/refresh")
		}
	}
}
