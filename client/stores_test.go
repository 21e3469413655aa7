package client

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The end-to-end tests that start the server binary (e2e_test.go and the
// ones that call eachStore elsewhere) run it on each store its --store
// selects. The Redis runs share one redis-server per package (stopped by
// TestMain), each test on a database of its own.
var packageRedis redistest.Shared

// eachStore runs f as one subtest per store, named as --store names it
// ("memory", "redis"), with the server flags that select that store
// (clipped, so f may append its own). The subtests run one after the
// other: the tests wait on lifetimes and retransmission timers.
func eachStore(t *testing.T, f func(t *testing.T, storeArgs []string)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) { f(t, []string{"--store", "memory"}) })
	t.Run("redis", func(t *testing.T) {
		srv, db := packageRedis.Database(t)
		// The Redis store needs the capability key every instance shares.
		key := filepath.Join(t.TempDir(), "capability.key")
		if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
			t.Fatal(err)
		}
		f(t, slices.Clip([]string{"--store", "redis", "--redis-addr", srv.Addr, "--redis-db", strconv.Itoa(db), "--capability-key-file", key}))
	})
}
