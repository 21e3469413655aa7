package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestSentinelPromotesAReplica kills the primary of a real topology and
// finds a former replica promoted, holding what was written before, and the
// other replica following it.
func TestSentinelPromotesAReplica(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Password: "s3cret"})
	ctx := context.Background()
	old, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if old != top.Nodes[0].Addr {
		t.Fatalf("the sentinels name %s, the first primary is %s", old, top.Nodes[0].Addr)
	}
	if _, err := top.Do(ctx, old, "SET", "k", "v"); err != nil {
		t.Fatalf("write on the primary: %v", err)
	}
	if _, err := top.Do(ctx, old, "WAIT", "2", "5000"); err != nil {
		t.Fatal(err)
	}
	if _, err := top.KillPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	addr, err := top.WaitForPromotion(ctx, old, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if top.Node(addr) == nil || addr == old {
		t.Fatalf("promoted %s, not a former replica", addr)
	}
	if v, err := top.Do(ctx, addr, "GET", "k"); err != nil {
		t.Fatal(err)
	} else if s, _ := v.ToString(); s != "v" {
		t.Fatalf("the promoted replica holds k=%q, want v", s)
	}
	// The other replica follows the new primary, so writes (which need one
	// replica) are accepted again.
	w, err := top.WaitForWritablePrimary(ctx, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if w != addr {
		t.Fatalf("the writable primary is %s, not the promoted %s", w, addr)
	}
}
