package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testKeyFile writes a capability key (64 hex digits: a shared key, as the
// Redis store requires) to a file of the test's and returns its path.
func testKeyFile(t *testing.T) string {
	t.Helper()
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte(strings.Repeat("ab", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	return key
}

// devRedisArgs are the arguments of a development server on the Redis
// store with a key file of the test's, for the tests of its settings.
func devRedisArgs(t *testing.T) []string {
	t.Helper()
	return []string{"--dev", "--store", "redis", "--capability-key-file", testKeyFile(t)}
}
