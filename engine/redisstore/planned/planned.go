// Package planned moves the primary role of a Sentinel-managed Redis to a
// replica without losing an acknowledged write and with the shortest write
// outage: the planned failover of `rendezvous failover` (docs/deployment.md).
//
// SENTINEL FAILOVER alone loses writes: once the chosen replica is told
// REPLICAOF NO ONE, the old primary still has its other replicas (and so
// satisfies min-replicas-to-write, and a WAIT for one replica) until the
// sentinels re-point them, and what it answers in between reaches neither
// the promoted replica nor, after their full resync, the others; and
// Sentinel may promote a replica that is behind. Failover therefore:
//
//  1. finds the primary every reachable sentinel names, and refuses unless
//     it has MinInSync replicas online and at most two seconds behind (a
//     promoted replica must still have a replica to acknowledge writes);
//  2. pauses the primary's writes (CLIENT PAUSE WRITE, bounded by Timeout
//     so a crash of this command cannot leave it paused);
//  3. waits until every replica has acknowledged the whole stream, so any
//     replica Sentinel picks holds every acknowledged write;
//  4. asks SENTINEL FAILOVER, of the last sentinel of the list first
//     (askFailover says why);
//  5. waits for the promotion itself: the chosen replica reports
//     role:master and every reachable sentinel names it (a check of the
//     old primary's replica count is true before that);
//  6. turns the old primary into a replica of the new one (what the
//     sentinels would do seconds later), so a client still on it meets
//     READONLY instead of a write that would vanish, waits (briefly) until
//     the new primary has a replica online, so the writes held by the pause
//     can be acknowledged there, then unpauses the old one. The store
//     takes the READONLY its held writes meet as the sign to ask the
//     sentinels again, and follows the new primary within milliseconds
//     (engine/redisstore/sentinel_links.go).
//
// A paused primary holds the sentinels' hello messages (PUBLISH), and past
// down-after-milliseconds they would think it down and start a failover of
// their own: for the duration, down-after-milliseconds is raised above
// the pause on every sentinel, and restored afterwards.
package planned

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Options configures Failover.
type Options struct {
	Sentinels []string // host:port each
	Master    string   // the name the sentinels monitor the primary under
	Password  string   // AUTH to the sentinels and the data nodes alike ("": none)
	// Timeout bounds the pause and the whole procedure (DefaultTimeout if
	// zero).
	Timeout time.Duration
	// MinInSync is how many replicas must be online and in sync before
	// anything is done (DefaultMinInSync if zero); Force skips the check.
	MinInSync int
	Force     bool
	// Log, when set, receives each step as it happens.
	Log func(step string, args ...any)
}

const (
	DefaultTimeout   = 10 * time.Second
	DefaultMinInSync = 2
	// maxLag is how far behind (seconds since its last acknowledgement,
	// sent every second) a replica still counts as in sync: the
	// documented min-replicas-max-lag.
	maxLag = 2
	// settleFor is how long a count of replicas in sync below MinInSync
	// is asked again before the failover is refused.
	settleFor = 3 * time.Second
)

// Result is what Failover did.
type Result struct {
	Old, New string
	// Paused is how long the old primary refused writes: from CLIENT PAUSE
	// to CLIENT UNPAUSE (writes on the new primary may begin earlier).
	Paused time.Duration
	// InSync is how many replicas were online and in sync at the start.
	InSync int
}

// ErrTooFewReplicas refuses a failover that would leave the new primary
// without enough replicas (Options.Force overrides it).
var ErrTooFewReplicas = errors.New("too few replicas in sync")

type run struct {
	o       Options
	clients map[string]rueidis.Client
}

// Failover runs the planned failover described in the package comment.
func Failover(ctx context.Context, o Options) (res Result, err error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MinInSync <= 0 {
		o.MinInSync = DefaultMinInSync
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if len(o.Sentinels) == 0 || o.Master == "" {
		return res, errors.New("planned failover: needs the sentinels and the master name")
	}
	r := &run{o: o, clients: map[string]rueidis.Client{}}
	defer r.close()
	deadline := time.Now().Add(o.Timeout)

	old, err := r.primary(ctx)
	if err != nil {
		return res, err
	}
	res.Old = old
	// A replica reports its offset once a second, so on a busy host one
	// may read two seconds behind for a moment: ask again for a while
	// before refusing.
	var info string
	for settle := time.Now().Add(settleFor); ; time.Sleep(100 * time.Millisecond) {
		if info, err = r.info(ctx, old); err != nil {
			return res, fmt.Errorf("the primary %s: %w", old, err)
		}
		if !strings.Contains(info, "role:master") {
			return res, fmt.Errorf("the sentinels name %s, which is not a primary", old)
		}
		if res.InSync = inSync(info); res.InSync >= o.MinInSync || time.Now().After(settle) {
			break
		}
	}
	o.Log("primary", "addr", old, "replicas_in_sync", res.InSync)
	if res.InSync < o.MinInSync && !o.Force {
		return res, fmt.Errorf("%w: %s has %d replicas online and in sync, %d needed (force to run anyway)",
			ErrTooFewReplicas, old, res.InSync, o.MinInSync)
	}
	if res.InSync == 0 {
		return res, fmt.Errorf("%w: %s has no replica to promote", ErrTooFewReplicas, old)
	}
	// A sentinel picks among the replicas it knows (from the primary's
	// INFO, every ten seconds): one that knows none would accept SENTINEL
	// FAILOVER and abort it.
	asked, err := r.knowingSentinels(ctx, 1)
	if err != nil {
		return res, err
	}

	restore, err := r.raiseDownAfter(ctx, o.Timeout+5*time.Second)
	if err != nil {
		return res, err
	}
	defer restore()
	pausedAt := time.Now()
	if err := r.do(ctx, old, "CLIENT", "PAUSE", strconv.FormatInt(o.Timeout.Milliseconds(), 10), "WRITE"); err != nil {
		return res, fmt.Errorf("pausing the primary's writes: %w", err)
	}
	unpaused := false
	unpause := func() {
		if !unpaused {
			_ = r.do(context.WithoutCancel(ctx), old, "CLIENT", "UNPAUSE")
			unpaused, res.Paused = true, time.Since(pausedAt)
		}
	}
	defer unpause() // on every return; should this fail, the pause ends by itself
	o.Log("paused", "addr", old)

	if err := r.waitCaughtUp(ctx, old, deadline); err != nil {
		return res, err
	}
	o.Log("replicas caught up")
	if err := r.askFailover(ctx, asked, deadline); err != nil {
		return res, err
	}
	promoted, err := r.waitPromotion(ctx, old, deadline)
	if err != nil {
		return res, err
	}
	res.New = promoted
	o.Log("promoted", "addr", promoted)
	host, port, err := net.SplitHostPort(promoted)
	if err != nil {
		return res, err
	}
	if err := r.do(ctx, old, "REPLICAOF", host, port); err != nil {
		return res, fmt.Errorf("turning the old primary %s into a replica of %s: %w", old, promoted, err)
	}
	if err := r.waitAttached(ctx, promoted); err != nil {
		o.Log("no replica attached yet; unpausing anyway", "err", err.Error())
	}
	unpause()
	o.Log("unpaused", "addr", old, "paused", res.Paused.Round(time.Millisecond).String())
	return res, nil
}
