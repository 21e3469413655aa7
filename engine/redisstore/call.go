package redisstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// call runs function fn once with the deployment prefix, "now" and the
// limits before args. It returns ctx.Err() (and runs nothing) when ctx is
// cancelled on entry or just before the call is sent; once sent, the call is
// not abandoned on cancellation (the function commits atomically or not at
// all, and the caller learns which) but it is bounded by the store's
// timeout. ok is false when Redis answered with an error or not at all in
// time: a script error, BUSY, LOADING, READONLY, OOM, a lost connection.
// The functions check everything before their first write, so a refused
// call changed nothing; a timeout is ambiguous, and the caller answers
// ServiceUnavailable either way.
func (s *Store) call(ctx context.Context, fn string, args ...string) (m rueidis.RedisMessage, ok bool, err error) {
	m, ok, _, err = s.send(ctx, fn, 0, args)
	return m, ok, err
}

// callAcked is call for a write the HTTP API acknowledges: with
// Config.AckReplicas set, the call is followed on the same connection by
// WAIT for that many replicas (acks.go), and unconfirmed is true when the
// function answered but fewer replicas than asked had its effects within
// Config.AckTimeout: the write may be applied, and may be lost by a
// failover, so the caller answers notReplicated and the client retries it
// (idempotently) rather than take it as acknowledged.
func (s *Store) callAcked(ctx context.Context, fn string, args ...string) (m rueidis.RedisMessage, ok, unconfirmed bool, err error) {
	return s.send(ctx, fn, s.acks, args)
}

func (s *Store) send(ctx context.Context, fn string, acks int64, args []string) (m rueidis.RedisMessage, ok, unconfirmed bool, err error) {
	if err := ctx.Err(); err != nil {
		return m, false, false, err
	}
	now, f, live := s.callNow()
	if !live {
		return m, false, false, nil // no live registration: fail closed, send nothing
	}
	cmd := func() rueidis.Completed { return s.command(fn, now, args) }
	if err := ctx.Err(); err != nil {
		return m, false, false, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if s.recheck.Load() && loadLibrary(cctx, s.c) == nil {
		s.recheck.Store(false)
	}
	do := func() (rueidis.RedisMessage, error) { return s.c.Do(cctx, cmd()).ToMessage() }
	if acks > 0 {
		do = func() (m rueidis.RedisMessage, err error) {
			m, unconfirmed, err = s.doAcked(cctx, cmd(), acks)
			return m, err
		}
	}
	m, rerr := do()
	if rerr != nil && s.c.Mode() == rueidis.ClientModeSentinel {
		m, rerr = retryReadOnly(cctx, do, m, rerr)
	}
	if rerr != nil {
		// Maybe a new primary (a failover passes through failed calls):
		// check its library's version before the next call.
		s.recheck.Store(true)
	}
	if rerr != nil && missingFunction(rerr) {
		// A flushed or newly promoted server without the library: the call
		// did not run, so load and call once more.
		if loadLibrary(cctx, s.c) == nil {
			m, rerr = do()
		}
	}
	if rerr != nil {
		s.fenced(f, rerr)
		s.noteFailure(rerr)
	}
	return m, rerr == nil, rerr == nil && unconfirmed, nil
}

// now is ARGV[1]: the test hook's time in ticks, or "" for the server's.
func (s *Store) now() string {
	if s.clock == nil {
		return ""
	}
	return strconv.FormatInt(int64(s.clock.Now()/s.tick), 10)
}

func (s *Store) command(fn, now string, args []string) rueidis.Completed {
	return s.c.B().Fcall().Function(fn).Numkeys(1).Key(s.prefix).Arg(now, s.limits).Arg(args...).Build()
}

func missingFunction(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	return ok && strings.Contains(e.Error(), "Function not found")
}

// unreachable is the result of a call Redis did not answer, or answered
// with an error or with what is not a transition's answer: nothing was
// erased (unlike under MarkUnavailable).
var unreachable = engine.Result{Outcome: engine.ServiceUnavailable, Unreachable: true}

// reply splits a transition's answer {outcome, pool, ...rest}. A reply
// that is not one answers ServiceUnavailable (unreachable).
func reply(m rueidis.RedisMessage, ok bool) (code int64, r engine.Result, rest []rueidis.RedisMessage) {
	if !ok {
		return int64(engine.ServiceUnavailable), unreachable, nil
	}
	a, err := m.ToArray()
	if err != nil || len(a) < 2 {
		return int64(engine.ServiceUnavailable), unreachable, nil
	}
	code, _ = a[0].AsInt64()
	pool, _ := a[1].AsInt64()
	if code >= 0 {
		r = engine.Result{Outcome: engine.Outcome(code), Pool: engine.Pool(pool)}
	}
	return code, r, a[2:]
}

// replayFlag reads the replay flag that leads a successful answer's rest.
func replayFlag(rest []rueidis.RedisMessage) bool {
	if len(rest) == 0 {
		return false
	}
	n, _ := rest[0].AsInt64()
	return n == 1
}

// Answers that are not outcomes (RETRY, BAD_PLAYERS in scripts/prelude/10_context.lua).
const (
	codeRetry      = -1 // an ID collided: regenerate and call again
	codeBadPlayers = -2 // current_players above the listing's max_players
)
