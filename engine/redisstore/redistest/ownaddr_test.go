package redistest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestOwnAddrsTopology: with OwnAddrs every node and sentinel listens on a
// loopback address of its own and connects from it, which is what a
// partition by nftables rules on addresses relies on: the primary sees its
// replicas and the sentinels come from their own addresses.
func TestOwnAddrsTopology(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{OwnAddrs: true})
	hosts := map[string]bool{}
	for _, s := range append(append([]*redistest.Server(nil), top.Nodes...), top.Sentinels...) {
		if h := s.Host(); h == "127.0.0.1" || hosts[h] || !strings.HasPrefix(h, "127.") {
			t.Fatalf("%s: not a loopback address of its own (have %v)", s.Addr, hosts)
		}
		hosts[s.Host()] = true
	}
	m, err := top.Do(context.Background(), top.Nodes[0].Addr, "CLIENT", "LIST")
	if err != nil {
		t.Fatal(err)
	}
	list, _ := m.ToString()
	for _, s := range append(append([]*redistest.Server(nil), top.Nodes[1:]...), top.Sentinels...) {
		if !strings.Contains(list, "addr="+s.Host()+":") {
			t.Errorf("the primary has no connection from %s (%s):\n%s", s.Addr, s.Host(), list)
		}
	}
}
