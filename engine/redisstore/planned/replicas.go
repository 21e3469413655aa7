package planned

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

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

// attachWait bounds waitAttached: a replica that needs a full
// resynchronisation takes longer, and the failover is done by then.
const attachWait = time.Second

// waitAttached waits, at most attachWait, until the promoted primary lists
// a replica online. Until then it refuses the writes a client must have
// replicated (NOREPLICAS, or a WAIT that times out), and the clients held
// by the old primary's pause would meet that refusal and back off, where
// a moment later their write succeeds.
func (r *run) waitAttached(ctx context.Context, primary string) error {
	deadline := time.Now().Add(attachWait)
	for {
		info, err := r.info(ctx, primary)
		if err == nil && inSync(info) > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no replica online")
			}
			return fmt.Errorf("%s after %v: %w", primary, attachWait, err)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
