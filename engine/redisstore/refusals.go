package redisstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Redis refuses a call with an error whose first word names why; a call
// that gets no answer in time is another matter. Either way the store
// answers ServiceUnavailable, and an operator needs to know which: a
// primary without its replicas (NOREPLICAS) wants the replicas looked at,
// a demoted primary (READONLY) a Sentinel that has not been followed yet,
// a full Redis (OOM) memory. So the store logs each failed transition
// call under its kind, one line per kind a second at most, with the
// number of failures it stands for.

// refusalReasons are the refusals Redis names, with what they mean for
// the deployment. Their messages are Redis's fixed texts (never our
// arguments), so the line may quote them.
var refusalReasons = map[string]string{
	"NOREPLICAS": "the primary has fewer in-sync replicas than min-replicas-to-write and refuses writes: look at the replicas and the links to them",
	"READONLY":   "the node is a replica (a demoted primary): writes are refused until the client follows the primary the sentinels name",
	"OOM":        "Redis reached maxmemory and refuses writes (noeviction): give it memory or lower the --max-* ceilings",
	"BUSY":       "a script runs past busy-reply-threshold and Redis answers nothing else until it ends",
	"LOADING":    "Redis is loading its data set from disk after a restart",
	"MASTERDOWN": "the replica lost its link to the primary",
	"MISCONF":    "Redis cannot persist (RDB or AOF error) and refuses writes: look at its disk",
	"NOAUTH":     "Redis wants a password: --redis-password-file",
	"WRONGPASS":  "Redis refused the password of --redis-password-file",
	"NOPERM":     "the Redis user may not run this command or touch these keys (ACL)",
	"TRYAGAIN":   "Redis asks to try again",
}

// noAnswer is the kind of a failure Redis did not answer: a timeout, a
// refused or lost connection.
const noAnswer = "no answer"

// refusalLog rate-limits the failure lines per kind. The kinds are the
// keys of refusalReasons, "ERR" (any other refusal, a script error among
// them) and noAnswer: a bounded set.
type refusalLog struct {
	mu    sync.Mutex
	kinds map[string]*refusalKind
}

type refusalKind struct {
	last   time.Time
	missed int // failures since the last line
}

// refusalKindOf names err: the refusal word Redis put first, "ERR" for
// one not in refusalReasons, noAnswer for no answer. ok is false for what
// is not a failure to report: our own fencing (the registry logs it) and
// a missing function (the call loads the library and runs again).
func refusalKindOf(err error) (kind string, ok bool) {
	e, isRedis := rueidis.IsRedisErr(err)
	if !isRedis {
		if errors.Is(err, context.Canceled) {
			return "", false
		}
		return noAnswer, true
	}
	msg := e.Error()
	word, _, _ := strings.Cut(msg, " ")
	switch {
	case word == "FENCED", strings.Contains(msg, "Function not found"):
		return "", false
	case refusalReasons[word] != "":
		return word, true
	}
	return "ERR", true
}

// noteFailure logs a failed call of the store, at most one line per kind
// a second.
func (s *Store) noteFailure(err error) {
	kind, ok := refusalKindOf(err)
	if !ok {
		return
	}
	r := &s.refusals
	now := time.Now()
	r.mu.Lock()
	if r.kinds == nil {
		r.kinds = map[string]*refusalKind{}
	}
	k := r.kinds[kind]
	if k == nil {
		k = &refusalKind{}
		r.kinds[kind] = k
	}
	k.missed++
	if now.Sub(k.last) < time.Second {
		r.mu.Unlock()
		return
	}
	n := k.missed
	k.last, k.missed = now, 0
	r.mu.Unlock()

	if kind == noAnswer {
		s.reg.log.Warn("Redis did not answer; the call answers service_unavailable", "err", err.Error(), "failures", n)
		return
	}
	attrs := []any{"refusal", kind, "failures", n}
	if reason := refusalReasons[kind]; reason != "" {
		attrs = append(attrs, "reason", reason, "redis_error", firstLine(err.Error()))
	}
	// An ERR may be a script's error, whose text could hold what the call
	// carried: only its kind is logged.
	s.reg.log.Warn("Redis refused a call; it answers service_unavailable", attrs...)
}

// firstLine bounds a Redis error text to its first line, 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
