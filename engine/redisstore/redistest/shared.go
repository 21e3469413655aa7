package redistest

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// sharedDatabases is how many databases a Shared server has: one per test
// that uses it, with room to spare.
const sharedDatabases = 1024

// Shared is one redis-server a whole test package shares: started by the
// first test that asks for it, stopped by Stop (from TestMain). Every test
// gets a database of its own, so tests stay independent (no state, quota
// or deployment-wide flag of one reaches another) without a FLUSHALL
// between them, and may run in parallel.
type Shared struct {
	once   sync.Once
	srv    *Server
	err    error
	lastDB atomic.Int32 // the last database handed out; 0 is never used
}

// Database returns the shared server, started on first use, and a database
// no other test of the package was given. It skips t when redis-server is
// not installed, or fails it when RequireEnv is set.
func (s *Shared) Database(t testing.TB) (*Server, int) {
	t.Helper()
	SkipIfMissing(t)
	s.once.Do(func() { s.srv, s.err = StartWith("--databases", strconv.Itoa(sharedDatabases)) })
	if s.err != nil {
		t.Fatalf("starting redis-server: %v", s.err)
	}
	db := int(s.lastDB.Add(1))
	if db >= sharedDatabases {
		t.Fatalf("all %d databases of the shared redis-server are used", sharedDatabases)
	}
	return s.srv, db
}

// Stop stops the server if a test started it.
func (s *Shared) Stop() {
	if s.srv != nil {
		s.srv.Stop()
	}
}
