package redisstore

import (
	"context"

	"github.com/rendezvous/rendezvous/engine"
)

// EndDrain ends the deployment's drain once its window has passed, for a
// server process starting on it. The drain belongs to the shared state and
// so outlives the process that began it: without this, a process started
// after a drained deployment would refuse new work for good. A drain still
// in its window (an operator's drain of the deployment) is left to finish.
// ended reports whether a drain was ended; err is ErrUnavailable when Redis
// did not answer.
func (s *Store) EndDrain(ctx context.Context) (ended bool, err error) {
	m, ok, err := s.call(ctx, "rdv_end_drain")
	if err != nil {
		return false, err
	}
	code, _, rest := reply(m, ok)
	if code != int64(engine.Success) || len(rest) != 1 {
		return false, ErrUnavailable
	}
	n, _ := rest[0].AsInt64()
	return n == 1, nil
}
