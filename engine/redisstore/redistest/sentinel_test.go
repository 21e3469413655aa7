package redistest_test

import (
	"context"
	"strings"
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
	_, addr := top.KillPrimaryUntilPromoted(t, old, 30*time.Second)
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
	// What a failing HA test prints: each node's replication (the killed
	// one's connection error), each sentinel's view of the primary (a
	// sentinel may still show the old one while it finishes the failover)
	// and its log, which tells of the primary going down.
	d := top.Describe(ctx)
	if got := strings.Count(d, ": primary "); got != len(top.Sentinels) {
		t.Errorf("%d of %d sentinels described:\n%s", got, len(top.Sentinels), d)
	}
	for _, want := range []string{"node " + addr + ": role:master", "node " + old + ": ", "+sdown master"} {
		if !strings.Contains(d, want) {
			t.Errorf("the description lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "node "+old+": role:") {
		t.Errorf("the killed node %s is described with a role:\n%s", old, d)
	}
}
