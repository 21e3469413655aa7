//go:build race

package redisstore_test

// raceEnabled: the race detector changes allocation counts (sync.Pool drops
// a share of what is put back, so reused buffers are sometimes made again),
// so the allocation checks assert only without -race.
const raceEnabled = true
