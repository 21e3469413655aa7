package redistest

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/planned"
)

// PlannedFailover moves the primary role to a replica without losing an
// acknowledged write, as `rendezvous failover` does (package planned: pause
// the primary's writes, wait until every replica has them, SENTINEL
// FAILOVER, wait for the promotion, make the old primary a replica,
// unpause), and returns the new primary. It runs with any number of
// replicas (Force): the tests choose their topology.
func (t *Topology) PlannedFailover(ctx context.Context, timeout time.Duration) (string, error) {
	res, err := planned.Failover(ctx, planned.Options{Sentinels: t.SentinelAddrs(), Master: MasterName,
		Password: t.Options.Password, Timeout: timeout, Force: true})
	return res.New, err
}
