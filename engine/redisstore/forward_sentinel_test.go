package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestForwardFollowsAPromotion: after Sentinel promotes a replica while the
// old primary stays up (SENTINEL FAILOVER, or a primary cut off from the
// sentinels), an instance's subscription moves to the new primary once its
// client follows it, not when Sentinel gets round to demoting the old
// primary (its INFO period is 10 s): until it moves, every forward to that
// instance is published on the new primary and lost, and a join through
// another instance waits for the host's next presence refresh.
func TestForwardFollowsAPromotion(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{})
	k := engine.RandomKeyring()
	instance := func() (*redisstore.Store, rueidis.Client) {
		c := sentinelClient(t, top)
		s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "fwd", Limits: engine.DefaultLimits(), Keyring: k})
		if err != nil {
			t.Fatalf("redisstore.New: %v", err)
		}
		return s, c
	}
	a, ca := instance()
	b, cb := instance()
	rb := listen(t, b)
	forward(t, a, b.InstanceID(), "before", true)
	rb.expect(t, "before")

	ctx := context.Background()
	old, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := top.Do(ctx, top.Sentinels[0].Addr, "SENTINEL", "FAILOVER", redistest.MasterName); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	promoted, err := top.WaitForPromotion(ctx, old, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Both clients send to the promoted primary (they poll the sentinels
	// every second): a's forwards are published there.
	for _, c := range []rueidis.Client{ca, cb} {
		deadline := time.Now().Add(10 * time.Second)
		for !sendsTo(c, promoted) {
			if time.Now().After(deadline) {
				t.Fatalf("the client still sends to %v, not to the promoted %s", c.Nodes(), promoted)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Liveness bound, well under the 10 s after which Sentinel demotes the
	// old primary (which ends the old subscription anyway).
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; ; i++ {
		p := fmt.Sprint("after the promotion ", i)
		delivered, err := a.Forward(ctx, b.InstanceID(), []byte(p))
		if err == nil && delivered {
			rb.expect(t, p)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no forward delivered within 3 s of both clients following the promotion (last: delivered %v, %v)", delivered, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sendsTo says whether c sends its commands to addr.
func sendsTo(c rueidis.Client, addr string) bool {
	_, ok := c.Nodes()[addr]
	return ok
}
