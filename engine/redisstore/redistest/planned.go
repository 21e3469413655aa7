package redistest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PlannedFailover moves the primary role to a replica with SENTINEL
// FAILOVER without losing an acknowledged write, and returns the new
// primary. SENTINEL FAILOVER alone does lose some: once the chosen replica
// is told REPLICAOF NO ONE, the old primary still has its other replicas
// (and so satisfies min-replicas-to-write) until the sentinel has seen the
// promotion and re-pointed them, about a second later, and the writes it
// answers in between reach neither the promoted replica nor, after their
// full resync, the others; and Sentinel may promote a replica that is
// behind. Pausing the old primary's writes (CLIENT PAUSE WRITE), waiting
// until every replica has acknowledged everything, and keeping the pause
// until the old primary has no replica left closes both: the paused writes
// then meet NOREPLICAS (nothing written) and the clients retry them on the
// new primary. It relies on MinReplicasToWrite being at least 1.
func (t *Topology) PlannedFailover(ctx context.Context, timeout time.Duration) (string, error) {
	old, err := t.PrimaryAddr(ctx)
	if err != nil {
		return "", err
	}
	deadline := time.Now().Add(timeout)
	// A paused primary holds the sentinels' PUBLISH of their hello
	// messages and so every PING queued behind it: past
	// down-after-milliseconds they think it down and may start a failover
	// of their own, racing the one asked for. Until the old primary is out
	// of the way they wait longer than the pause.
	if err := t.setDownAfter(ctx, timeout+5*time.Second); err != nil {
		return "", err
	}
	defer func() { _ = t.setDownAfter(ctx, t.Options.DownAfter) }()
	if _, err := t.Do(ctx, old, "CLIENT", "PAUSE", strconv.FormatInt(timeout.Milliseconds(), 10), "WRITE"); err != nil {
		return "", fmt.Errorf("pausing the primary's writes: %w", err)
	}
	// Unpaused on every return; should this fail, the pause ends by itself.
	defer func() { _, _ = t.Do(ctx, old, "CLIENT", "UNPAUSE") }()
	if err := t.waitReplicasCaughtUp(ctx, old, deadline); err != nil {
		return "", err
	}
	for {
		_, err := t.Do(ctx, t.Sentinels[0].Addr, "SENTINEL", "FAILOVER", MasterName)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("SENTINEL FAILOVER: %w", err)
		}
		time.Sleep(200 * time.Millisecond) // a failover still in progress (INPROG)
	}
	promoted, err := t.WaitForPromotion(ctx, old, time.Until(deadline))
	if err != nil {
		return "", err
	}
	last := errors.New("not checked")
	for time.Now().Before(deadline) {
		m, err := t.Do(ctx, old, "INFO", "replication")
		if err == nil {
			info, _ := m.ToString()
			if strings.Contains(info, "role:slave") || strings.Contains(info, "connected_slaves:0\r\n") {
				return promoted, nil
			}
			last = errors.New("the old primary still has a replica")
		} else {
			last = err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("the old primary %s kept a replica: %w", old, last)
}

// waitReplicasCaughtUp waits until every replica of the (write-paused)
// primary has acknowledged its whole replication stream. Sentinel picks
// the replica to promote by the offsets of its last INFO, up to 10 s old,
// and may pick one that is behind; once every replica has everything, any
// pick keeps every acknowledged write. A replica acknowledges once a
// second, so this takes about a second.
func (t *Topology) waitReplicasCaughtUp(ctx context.Context, primary string, deadline time.Time) error {
	last := errors.New("not checked")
	for time.Now().Before(deadline) {
		m, err := t.Do(ctx, primary, "INFO", "replication")
		if err != nil {
			last = err
		} else if info, _ := m.ToString(); replicasCaughtUp(info) {
			return nil
		} else {
			last = fmt.Errorf("a replica is behind: %q", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the replicas of %s did not catch up: %w", primary, last)
}

// replicasCaughtUp says whether a primary's INFO replication lists at
// least one replica and every listed replica at master_repl_offset.
func replicasCaughtUp(info string) bool {
	var offset string
	var acked []string
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			offset = v
		}
		if strings.HasPrefix(line, "slave") && strings.Contains(line, ":ip=") {
			for _, f := range strings.Split(line, ",") {
				if v, ok := strings.CutPrefix(f, "offset="); ok {
					acked = append(acked, v)
				}
			}
		}
	}
	if offset == "" || len(acked) == 0 {
		return false
	}
	for _, a := range acked {
		if a != offset {
			return false
		}
	}
	return true
}

// setDownAfter sets down-after-milliseconds on every sentinel.
func (t *Topology) setDownAfter(ctx context.Context, d time.Duration) error {
	for _, s := range t.Sentinels {
		if _, err := t.Do(ctx, s.Addr, "SENTINEL", "SET", MasterName, "down-after-milliseconds", strconv.FormatInt(d.Milliseconds(), 10)); err != nil {
			return fmt.Errorf("sentinel %s: %w", s.Addr, err)
		}
	}
	return nil
}
