package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestStoreFollowsAPlannedFailoverAtOnce: under a writer, the store is on
// the promoted primary within 250 ms of the planned failover's end, by the
// READONLY its writes meet on the demoted one. The client here neither
// polls the sentinels nor hears an early +switch-master: it subscribes to
// the sentinel the failover is asked of (the planned failover asks the
// last of the list first; the client subscribes to the first), which
// announces the switch only once every replica is reconfigured, a second
// or more later.
func TestStoreFollowsAPlannedFailoverAtOnce(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Replicas: 2})
	ctx := context.Background()
	sentinels := top.SentinelAddrs()
	slices.Reverse(sentinels)
	opt := redisstore.SentinelClientOption(sentinels, redistest.MasterName, "")
	opt.Sentinel.TopologyRefreshInterval = 0
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	s, err := redisstore.New(ctx, redisstore.Config{Client: c, Name: "follow", Limits: engine.DefaultLimits(),
		Keyring: engine.RandomKeyring(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var failed atomic.Int64
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if _, r, err := createListing(s, fmt.Sprint(i)); err != nil || !r.OK() {
				failed.Add(1)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	old := s.Primary()
	promoted, err := top.PlannedFailover(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("planned failover: %v%s", err, top.Describe(ctx))
	}
	ended := time.Now()
	for s.Primary() != promoted {
		if time.Since(ended) > 3*time.Second {
			t.Fatalf("the store still sends to %s 3 s after the promotion of %s (was %s)", s.Primary(), promoted, old)
		}
		time.Sleep(time.Millisecond)
	}
	took := time.Since(ended)
	// The writes the pause held met READONLY when it ended, and were sent
	// again to the new primary: none failed, unless the machine was slow
	// enough for one to outlast a bound (which is why it is not asserted).
	t.Logf("%s -> %s: the store followed %v after the failover ended; %d creations failed",
		old, promoted, took.Round(time.Millisecond), failed.Load())
	if took > 250*time.Millisecond {
		t.Errorf("the store followed the promotion %v after the failover ended, want at most 250 ms", took)
	}
	if _, r, err := createListing(s, "after"); err != nil || !r.OK() {
		t.Fatalf("a creation after the failover: %+v, %v", r, err)
	}
}
