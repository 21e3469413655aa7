package redistest

import "testing"

// PauseInTest pauses the server (Pause) for an outage a test stages and
// returns the resume that ends it. If the test stops before resuming (a
// t.Fatal during the outage), the server is resumed when the test ends, so
// a failed test does not leave a frozen server to the cleanups after it.
// A failure to pause or to resume fails the test.
func (s *Server) PauseInTest(t testing.TB) (resume func()) {
	t.Helper()
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = s.Resume()
		}
	})
	return func() {
		t.Helper()
		resumed = true
		if err := s.Resume(); err != nil {
			t.Fatal(err)
		}
	}
}
