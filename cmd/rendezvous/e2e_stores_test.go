package main

import (
	"slices"
	"strconv"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// The end-to-end tests run the real binary on each store --store selects.
// The Redis runs share one redis-server per package (stopped by TestMain),
// each test on a database of its own: the drain, like all state, is
// deployment-wide on Redis and must not reach the next test.
var packageRedis redistest.Shared

// redisStoreArgs returns the flags that put a server on a database of the
// package's redis-server that no other test uses; every instance a test
// starts with them shares the state (and the capability key).
func redisStoreArgs(t testing.TB) []string {
	t.Helper()
	srv, db := packageRedis.Database(t)
	return append(redisArgsFor(t, srv), "--redis-db", strconv.Itoa(db))
}

// eachStore runs f as one subtest per store, named as --store names it
// ("memory", "redis"), with the flags that select that store (clipped, so
// f may append its own). The subtests run one after the other: most of
// these tests wait on timers or count what the server answered under load,
// and two servers fighting for the same cores would blur what they check.
func eachStore(t *testing.T, f func(t *testing.T, storeArgs []string)) {
	t.Helper()
	runStores(t, false, f)
}

// eachStoreInParallel is eachStore with both subtests at once, for a test
// that spends its time waiting on one of the server's timeouts, not
// computing.
func eachStoreInParallel(t *testing.T, f func(t *testing.T, storeArgs []string)) {
	t.Helper()
	runStores(t, true, f)
}

func runStores(t *testing.T, parallel bool, f func(t *testing.T, storeArgs []string)) {
	t.Helper()
	for _, store := range []string{storeMemory, storeRedis} {
		t.Run(store, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			args := []string{"--store", storeMemory}
			if store == storeRedis {
				args = redisStoreArgs(t)
			}
			f(t, slices.Clip(args))
		})
	}
}

// storeOf is the store storeArgs select.
func storeOf(storeArgs []string) string {
	i := slices.Index(storeArgs, "--store")
	if i < 0 || i+1 >= len(storeArgs) {
		panic("BUG: store flags without --store")
	}
	return storeArgs[i+1]
}
