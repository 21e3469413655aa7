package planned

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What Failover asks of the sentinels.

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
// INPROG), from the last of the list to the first. The sentinel asked
// leads the failover, and announces +switch-master only once every
// replica is reconfigured, about a second after the others; the instances'
// clients, given the same list, hear the events of its first sentinel, so
// asking the last lets an instance that writes nothing meanwhile (and so
// meets no READONLY) follow the promotion as soon as the others name it.
func (r *run) askFailover(ctx context.Context, sentinels []string, deadline time.Time) error {
	var last error
	for {
		for _, s := range slices.Backward(sentinels) {
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
