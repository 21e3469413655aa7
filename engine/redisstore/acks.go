package redisstore

import (
	"context"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// Acknowledged writes wait for replicas (Config.AckReplicas): Sentinel
// promotes a replica without the writes its primary acknowledged last, so
// a write the HTTP API acknowledges as soon as the primary applied it can
// vanish in a failover. With AckReplicas = n, the functions behind listing
// create, renew and delete, attempt create and revocations (callAcked) are
// followed on the same connection by WAIT n <AckTimeout>: the answer
// stands only when n replicas hold the write (WAIT counts the replicas
// that acknowledged this connection's last write, and every writing
// function writes at least meta's clock, so a call that changed nothing
// else still makes WAIT cover what earlier calls wrote, the write a client
// retries among them). Otherwise the call answers notReplicated, and the
// client retries idempotently: a creation replays its record, a renewal
// answers conflict with the version it reached, a deletion not_found.
//
// Redis 7.0 has no WAITAOF (7.2): a replica holding the write in memory is
// what is asked, which is what a promotion keeps.

// DefaultAckTimeout is how long an acknowledged write waits for replicas
// when Config.AckTimeout is zero.
const DefaultAckTimeout = 500 * time.Millisecond

// notReplicated answers a write that fewer replicas than asked confirmed
// in time: it may have been applied (so it is not Unreachable), and the
// client must not take it as acknowledged.
var notReplicated = engine.Result{Outcome: engine.ServiceUnavailable, NotReplicated: true}

// doAcked sends the function call c and WAIT for acks replicas as one
// pipeline on one connection (WAIT is a blocking command, so the client
// takes a dedicated connection of its pool for both: WAIT then counts
// exactly that connection's writes). err is the call's own error.
func (s *Store) doAcked(ctx context.Context, c rueidis.Completed, acks int64) (m rueidis.RedisMessage, unconfirmed bool, err error) {
	w := s.c.B().Wait().Numreplicas(acks).Timeout(s.ackTimeout.Milliseconds()).Build()
	res := s.c.DoMulti(ctx, c, w)
	m, err = res[0].ToMessage()
	n, werr := res[1].AsInt64()
	return m, werr != nil || n < acks, err
}

// unconfirmed is notReplicated when nr is set, else the zero Result (the
// answer beside an error).
func unconfirmed(nr bool) engine.Result {
	if nr {
		return notReplicated
	}
	return engine.Result{}
}
