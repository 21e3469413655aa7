package redisstore_test

import (
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// sentinelClient connects to top's primary through its sentinels, as an
// instance does (SentinelClientOption, with the topology's password), and
// closes the client when the test ends.
func sentinelClient(t *testing.T, top *redistest.Topology) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(redisstore.SentinelClientOption(top.SentinelAddrs(), redistest.MasterName, top.Options.Password))
	if err != nil {
		t.Fatalf("connecting through Sentinel: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// sentinelTopology starts a Sentinel topology with o
// (redistest.RequireSentinel) and connects a client through its sentinels.
func sentinelTopology(t *testing.T, o redistest.SentinelOptions) (*redistest.Topology, rueidis.Client) {
	t.Helper()
	top := redistest.RequireSentinel(t, o)
	return top, sentinelClient(t, top)
}
