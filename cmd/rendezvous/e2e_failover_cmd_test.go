package main

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestE2EFailoverCommand: `rendezvous failover`, run as an operator would
// with the instances' environment (RDV_REDIS_SENTINEL, RDV_REDIS_MASTER,
// RDV_REDIS_PASSWORD_FILE), moves the primary of a Sentinel deployment
// with two replicas to a replica; the instance, which acknowledges writes
// once a replica has them, keeps its listing and publishes again
// afterwards, and the old primary is the new one's replica.
func TestE2EFailoverCommand(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Password: failoverPassword})
	args := append(sentinelArgs(t, top), ackedArgs...)
	p := startProc(t, args...)
	h := publishHost(t, p, "before-failover", "before")
	ctx := context.Background()
	old, err := top.PrimaryAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runBinary(t, failoverEnv(args), "failover")
	if code != 0 {
		t.Fatalf("rendezvous failover exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	t.Logf("rendezvous failover:\n%s", stdout)
	m := regexp.MustCompile(`promoted (\S+) \(was (\S+)\)`).FindStringSubmatch(stdout)
	if m == nil || m[2] != old || m[1] == old {
		t.Fatalf("rendezvous failover did not report the promotion away from %s:\n%s", old, stdout)
	}
	now, err := top.PrimaryAddr(ctx)
	if err != nil || now != m[1] {
		t.Fatalf("the sentinels name %s (%v), the command reported %s", now, err, m[1])
	}
	waitReady(t, p, http.StatusOK, `{"status":"ready"}`)
	h.refresh() // a listing is visible while its host's presence is fresh
	// The new primary refuses writes (NOREPLICAS: 503) until a replica
	// acknowledges it, and a read runs the store's cleanup, a write: ask
	// again for a bounded while.
	get := func() httpReply { return p.call("GET", "/v1/listings/"+h.pub.ListingID, p.tokens["client"], nil) }
	r := get()
	for deadline := time.Now().Add(10 * time.Second); r.status == http.StatusServiceUnavailable && time.Now().Before(deadline); r = get() {
		time.Sleep(100 * time.Millisecond)
	}
	r.expect(t, "the listing made before the failover", http.StatusOK, nil)
	p.publish("after-failover", "after")
	infoMsg, err := top.Do(ctx, old, "INFO", "replication")
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := infoMsg.ToString(); !strings.Contains(info, "role:slave") {
		t.Errorf("the old primary is not a replica:\n%s", info)
	}
}

// TestE2EFailoverCommandRefusesOneReplica: with one replica the command
// refuses (exit 1, naming the cause) and the primary stays.
func TestE2EFailoverCommandRefusesOneReplica(t *testing.T) {
	top := redistest.RequireSentinel(t, redistest.SentinelOptions{Replicas: 1, Password: failoverPassword})
	args := sentinelArgs(t, top)
	old, err := top.PrimaryAddr(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runBinary(t, failoverEnv(args), "failover")
	if code != exitFailure || !strings.Contains(stderr, "too few replicas in sync") || !strings.Contains(stderr, "force") {
		t.Fatalf("rendezvous failover with one replica: exit %d, stderr %q; want 1 naming too few replicas and --force", code, stderr)
	}
	if now, err := top.PrimaryAddr(context.Background()); err != nil || now != old {
		t.Fatalf("the primary is %s (%v) after a refused failover, want %s", now, err, old)
	}
}

// failoverEnv is the environment of an instance started with args, for
// the settings `rendezvous failover` reads.
func failoverEnv(args []string) []string {
	var env []string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--redis-sentinel", "--redis-master", "--redis-password-file":
			env = append(env, envName(strings.TrimPrefix(args[i], "--"))+"="+args[i+1])
		}
	}
	return env
}
