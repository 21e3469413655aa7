package main

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestHASentinelPrimaryKilled: two instances on a Sentinel topology, as
// documented (acknowledged writes wait for a replica: ackedArgs), serve a
// mixed load of two tenants' real clients (HTTP publish, renew, join,
// cross-tenant reads; UDP presence and binds) when the Redis primary is
// killed (SIGKILL). Sentinel promotes a replica, both instances follow it
// without a restart, and the checks every fault shares hold (failoverLoad.verify):
// attempts made under the old primary refused typed, no second
// introduction, no admitted listing lost, invariants on the new primary,
// no ceiling breach, no cross-tenant read, every answer typed; service is
// back within Sentinel's failover-timeout + 2 s.
func TestHASentinelPrimaryKilled(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Password: failoverPassword})
	d := startFailoverDeployment(t, top, ackedArgs...)
	ctx := context.Background()
	old, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := startFailoverLoad(t, d)
	time.Sleep(1500 * time.Millisecond)
	killed, promoted := top.KillPrimaryUntilPromoted(t, old, 30*time.Second)
	l.waitServed(time.Now())
	time.Sleep(time.Second)
	l.Halt()
	l.everyInstanceServes()

	bound := top.Options.FailoverTimeout + 2*time.Second
	// No loss window: every listing the load was answered had a replica.
	e, recovery := l.verify(failoverFault{at: killed, newPrimary: promoted}, failoverLimits())
	e.Scenario, e.Description = "redis-primary-killed", "SIGKILL of the Sentinel-managed Redis primary under mixed load on two instances, acknowledged writes replicated (--redis-ack-replicas 1)"
	e.SetTimes(recovery, bound)
	e.Log(t)
	if got := recovery; got > bound {
		t.Errorf("service back %v after the kill, beyond failover-timeout + 2 s = %v", got, bound)
	}
}

// failoverPassword authenticates the fault tests' instances to Redis and Sentinel
// (sentinelArgs writes it to a password file).
const failoverPassword = "ha-sentinel-pass-0123456789"

// ackedArgs is the documented Sentinel deployment's setting: an HTTP
// answer acknowledges a write only once a replica holds it.
var ackedArgs = []string{"--redis-ack-replicas", "1"}
