package redisstore_test

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// One real redis-server serves the tests of the package, started by
// TestMain; each store gets its own deployment name, so tests never see
// each other's keys. Fault tests start their own server (dedicatedServer),
// since they stop, fill or demote it.
var (
	shared     *redistest.Server
	clientOnce sync.Once
	client     rueidis.Client
	nextName   atomic.Int64
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if redistest.Missing() != "" {
		return m.Run() // each test skips, or fails under RDV_REQUIRE_REDIS
	}
	var err error
	if shared, err = redistest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting redis-server:", err)
		return 1
	}
	defer func() {
		if client != nil {
			client.Close()
		}
		shared.Stop()
	}()
	return m.Run()
}

// redisClient returns the shared server's client.
func redisClient(t testing.TB) rueidis.Client {
	t.Helper()
	redistest.SkipIfMissing(t)
	clientOnce.Do(func() { client = newClient(t, shared.Addr) })
	return client
}

func newClient(t testing.TB, addr string) rueidis.Client {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("connecting to redis-server at %s: %v", addr, err)
	}
	return c
}

// dedicatedServer starts a server of the test's own, with a client, both
// stopped when the test ends.
func dedicatedServer(t *testing.T) (*redistest.Server, rueidis.Client) { return dedicatedServerB(t) }

func dedicatedServerB(t testing.TB) (*redistest.Server, rueidis.Client) {
	t.Helper()
	s := redistest.Require(t)
	c := newClient(t, s.Addr)
	t.Cleanup(c.Close)
	return s, c
}

// freshName is a deployment name no other store of this test run uses.
func freshName() string { return "t" + strconv.FormatInt(nextName.Add(1), 10) }

func netipAP(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }
