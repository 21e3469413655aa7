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
//  4. asks SENTINEL FAILOVER;
//  5. waits for the promotion itself: the chosen replica reports
//     role:master and every reachable sentinel names it (a check of the
//     old primary's replica count is true before that);
//  6. turns the old primary into a replica of the new one (what the
//     sentinels would do seconds later), so a client still on it meets
//     READONLY instead of a write that would vanish, then unpauses it.
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
	unpause()
	o.Log("unpaused", "addr", old, "paused", res.Paused.Round(time.Millisecond).String())
	return res, nil
}

func (r *run) client(addr string) (rueidis.Client, error) {
	if c, ok := r.clients[addr]; ok {
		return c, nil
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, Password: r.o.Password,
		DisableCache: true, ForceSingleClient: true, ConnWriteTimeout: 2 * time.Second,
		Dialer: net.Dialer{Timeout: 2 * time.Second}})
	if err != nil {
		return nil, err
	}
	r.clients[addr] = c
	return c, nil
}

func (r *run) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

// doMsg runs one command on addr, bounded by two seconds.
func (r *run) doMsg(ctx context.Context, addr string, args ...string) (rueidis.RedisMessage, error) {
	c, err := r.client(addr)
	if err != nil {
		return rueidis.RedisMessage{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return c.Do(cctx, c.B().Arbitrary(args...).Build()).ToMessage()
}

func (r *run) do(ctx context.Context, addr string, args ...string) error {
	_, err := r.doMsg(ctx, addr, args...)
	return err
}

func (r *run) info(ctx context.Context, addr string) (string, error) {
	m, err := r.doMsg(ctx, addr, "INFO", "replication")
	if err != nil {
		return "", err
	}
	return m.ToString()
}

// primary is the address every reachable sentinel names, when a majority
// of them answer.
func (r *run) primary(ctx context.Context) (string, error) {
	named, answered := "", 0
	var errs []error
	for _, s := range r.o.Sentinels {
		m, err := r.doMsg(ctx, s, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", r.o.Master)
		var hp []string
		if err == nil {
			hp, err = m.AsStrSlice()
		}
		if err == nil && len(hp) != 2 {
			err = fmt.Errorf("answered %q", hp)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s: %w", s, err))
			continue
		}
		addr := net.JoinHostPort(hp[0], hp[1])
		if named != "" && addr != named {
			return "", fmt.Errorf("the sentinels disagree on the primary: %s and %s", named, addr)
		}
		named, answered = addr, answered+1
	}
	if answered <= len(r.o.Sentinels)/2 {
		return "", fmt.Errorf("only %d of %d sentinels answered: %w", answered, len(r.o.Sentinels), errors.Join(errs...))
	}
	return named, nil
}

// raiseDownAfter sets down-after-milliseconds to d on every sentinel and
// returns what sets each back to its own value.
func (r *run) raiseDownAfter(ctx context.Context, d time.Duration) (restore func(), err error) {
	saved := map[string]string{}
	restore = func() {
		for s, v := range saved {
			_ = r.do(context.WithoutCancel(ctx), s, "SENTINEL", "SET", r.o.Master, "down-after-milliseconds", v)
		}
	}
	for _, s := range r.o.Sentinels {
		m, err := r.doMsg(ctx, s, "SENTINEL", "MASTER", r.o.Master)
		if err != nil {
			continue // an unreachable sentinel cannot start a failover either
		}
		kv, err := m.AsStrMap() // RESP3 (a RESP2 flat list reads the same)
		v := kv["down-after-milliseconds"]
		if v == "" {
			restore()
			return nil, fmt.Errorf("sentinel %s: no down-after-milliseconds in SENTINEL MASTER: %v", s, err)
		}
		if err := r.do(ctx, s, "SENTINEL", "SET", r.o.Master, "down-after-milliseconds", strconv.FormatInt(d.Milliseconds(), 10)); err != nil {
			restore()
			return nil, fmt.Errorf("sentinel %s: %w", s, err)
		}
		saved[s] = v
	}
	return restore, nil
}

// waitCaughtUp waits until every replica of the (write-paused) primary
// has processed its whole replication stream: each replica's own
// master_repl_offset (read from the replica, which knows at once) reaches
// the primary's. The primary's view of the replicas' offsets would do too,
// but they report it once a second, and the prompt request WAIT sends is
// held while writes are paused.
func (r *run) waitCaughtUp(ctx context.Context, primary string, deadline time.Time) error {
	last := errors.New("not checked")
	for time.Now().Before(deadline) {
		if last = r.caughtUp(ctx, primary); last == nil {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("the replicas of %s did not catch up: %w", primary, last)
}

func (r *run) caughtUp(ctx context.Context, primary string) error {
	info, err := r.info(ctx, primary)
	if err != nil {
		return err
	}
	want := field(info, "master_repl_offset")
	rs := replicaFields(info)
	if want == "" || len(rs) == 0 {
		return fmt.Errorf("no replica listed:\n%s", info)
	}
	for _, f := range rs {
		addr := net.JoinHostPort(f["ip"], f["port"])
		ri, err := r.info(ctx, addr)
		if err != nil {
			return fmt.Errorf("replica %s: %w", addr, err)
		}
		if got := field(ri, "master_repl_offset"); got != want {
			return fmt.Errorf("replica %s at offset %s, the primary at %s", addr, got, want)
		}
	}
	return nil
}

// knowingSentinels are the sentinels that list at least n replicas of
// the primary as usable (flags "slave": not down, not disconnected).
func (r *run) knowingSentinels(ctx context.Context, n int) ([]string, error) {
	var out []string
	var last error
	for _, s := range r.o.Sentinels {
		m, err := r.doMsg(ctx, s, "SENTINEL", "REPLICAS", r.o.Master)
		if err != nil {
			last = fmt.Errorf("sentinel %s: %w", s, err)
			continue
		}
		list, _ := m.ToArray()
		usable := 0
		for _, e := range list {
			if f, err := e.AsStrMap(); err == nil && f["flags"] == "slave" {
				usable++
			}
		}
		if usable >= n {
			out = append(out, s)
		} else {
			last = fmt.Errorf("sentinel %s knows %d usable replicas, the primary has %d in sync", s, usable, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no sentinel knows the replicas yet (they learn them from the primary within ten seconds): %w", last)
	}
	return out, nil
}

// askFailover asks each of the sentinels in turn for SENTINEL FAILOVER
// until one accepts (one still busy with an earlier failover answers
// INPROG).
func (r *run) askFailover(ctx context.Context, sentinels []string, deadline time.Time) error {
	var last error
	for {
		for _, s := range sentinels {
			if last = r.do(ctx, s, "SENTINEL", "FAILOVER", r.o.Master); last == nil {
				r.o.Log("failover asked", "sentinel", s)
				return nil
			}
			r.o.Log("failover refused", "sentinel", s, "err", last.Error())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("SENTINEL FAILOVER: %w", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitPromotion waits until every reachable sentinel (a majority at least)
// names a primary other than old and that node reports role:master.
func (r *run) waitPromotion(ctx context.Context, old string, deadline time.Time) (string, error) {
	last := errors.New("not checked")
	for time.Now().Before(deadline) {
		addr, err := r.primary(ctx)
		switch {
		case err != nil:
			last = err
		case addr == old:
			last = fmt.Errorf("the sentinels still name %s", old)
		default:
			info, err := r.info(ctx, addr)
			if err == nil && strings.Contains(info, "role:master") {
				return addr, nil
			}
			last = fmt.Errorf("the sentinels name %s, not yet a primary (%v)", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", fmt.Errorf("no promotion within the timeout: %w", last)
}

// inSync counts the replicas a primary's INFO replication lists online and
// acknowledging within maxLag seconds.
func inSync(info string) int {
	n := 0
	for _, f := range replicaFields(info) {
		lag, err := strconv.Atoi(f["lag"])
		if f["state"] == "online" && err == nil && lag <= maxLag {
			n++
		}
	}
	return n
}

// replicaFields parses INFO replication's "slaveN:ip=…,port=…,state=…,
// offset=…,lag=…" lines.
func replicaFields(info string) []map[string]string {
	var out []map[string]string
	for _, line := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(k, "slave") || !strings.Contains(v, "ip=") {
			continue
		}
		f := map[string]string{}
		for _, kv := range strings.Split(v, ",") {
			if a, b, ok := strings.Cut(kv, "="); ok {
				f[a] = b
			}
		}
		out = append(out, f)
	}
	return out
}

func field(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}
