package main

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// refusedMsg is the log line of a call Redis refused (engine/redisstore
// refusals.go).
const refusedMsg = "Redis refused a call; it answers service_unavailable"

// refusalLines returns p's log lines for calls Redis refused with kind.
func refusalLines(p *proc, kind string) []map[string]any {
	var out []map[string]any
	for _, m := range p.logLines() {
		if m["msg"] == refusedMsg && m["refusal"] == kind {
			out = append(out, m)
		}
	}
	return out
}

// TestE2ERedisRefusalsAreNamed: the real binary on a real redis-server
// that refuses writes (no replica under min-replicas-to-write, maxmemory
// reached, turned into a replica) answers 503 service_unavailable and logs
// each refusal under Redis's own name (NOREPLICAS, OOM, READONLY) with
// what it means, one line a second at most with the count of refusals it
// stands for, never as a Redis that did not answer. Once Redis takes
// writes again, so does the server.
func TestE2ERedisRefusalsAreNamed(t *testing.T) {
	srv, args := redisServerArgs(t)
	// A lease the refusals cannot outlast: the instance keeps serving (and
	// sending calls) through them.
	p := startProc(t, append(args, "--instance-lease", "60s")...)
	p.waitLogged("redis store", 1)
	redisStart := p.logged("redis store")
	if redisStart == nil || redisStart["redis_addr"] != srv.Addr || redisStart["redis_primary"] != nil {
		t.Fatalf("the redis store line %v does not name the one server %s", redisStart, srv.Addr)
	}
	for _, c := range []struct {
		kind       string
		on, off    [][]string
		redisError string
	}{
		{"NOREPLICAS", [][]string{{"CONFIG", "SET", "min-replicas-to-write", "1"}},
			[][]string{{"CONFIG", "SET", "min-replicas-to-write", "0"}}, "NOREPLICAS"},
		{"OOM", [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}},
			[][]string{{"CONFIG", "SET", "maxmemory", "0"}}, "OOM"},
		// A replica of a primary that is not there: writes are refused,
		// the data stays.
		{"READONLY", [][]string{{"REPLICAOF", "127.0.0.1", "1"}},
			[][]string{{"REPLICAOF", "NO", "ONE"}}, "READONLY"},
	} {
		t.Run(c.kind, func(t *testing.T) {
			for _, cmd := range c.on {
				if err := redisCmd(t, srv, cmd...).Error(); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			// Refusals for over a second: a first line at once, a second
			// one counting those in between.
			tries := 0
			began := time.Now()
			for i := 0; i < 30 || time.Since(began) < 1200*time.Millisecond; i++ {
				tries++
				key := fmt.Sprintf("refused-%s-%d", c.kind, i)
				r := p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody(key), "Idempotency-Key", key)
				if r.status != http.StatusServiceUnavailable || r.problemCode(t) != "service_unavailable" {
					t.Fatalf("create under %s: %d %s, want 503 service_unavailable", c.kind, r.status, r.body)
				}
			}
			took := time.Since(began)
			for _, cmd := range c.off {
				if err := redisCmd(t, srv, cmd...).Error(); err != nil {
					t.Fatalf("%v: %v", cmd, err)
				}
			}
			lines := refusalLines(p, c.kind)
			if len(lines) == 0 {
				t.Fatalf("no %q line with refusal=%s; log:\n%s", refusedMsg, c.kind, p.stderr.String())
			}
			// One line a second at most (and one at the start).
			if bound := 1 + int(took/time.Second) + 1; len(lines) > bound {
				t.Errorf("%d lines for %d refusals in %v, want at most %d", len(lines), tries, took, bound)
			}
			if len(lines) < 2 || lines[1]["failures"].(float64) < 2 {
				t.Errorf("refusals over %v: lines %v, want a second line counting several", took, lines)
			}
			failures := 0.0
			for _, l := range lines {
				failures += l["failures"].(float64)
				if !strings.HasPrefix(l["redis_error"].(string), c.redisError) || l["reason"] == "" || l["component"] != "redisstore" {
					t.Errorf("refusal line %v", l)
				}
			}
			if failures < 2 || failures > float64(tries) {
				t.Errorf("the lines count %v refusals, want 1..%d", failures, tries)
			}
			t.Logf("%d refusals in %v: %d log lines", tries, took.Round(time.Millisecond), len(lines))
		})
	}
	if p.logged("Redis did not answer; the call answers service_unavailable") != nil {
		t.Errorf("a refusal was logged as no answer:\n%s", p.stderr.String())
	}
	// Writes are taken again.
	deadline := time.Now().Add(hangGuard)
	for i := 0; ; i++ {
		key := "after-" + strconv.Itoa(i)
		r := p.call("POST", "/v1/listings", p.tokens["publisher"], listingBody(key), "Idempotency-Key", key)
		if r.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no create succeeds after Redis takes writes again: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// promotedMsg is the log line of a followed promotion (engine/redisstore
// primary.go).
const promotedMsg = "following the Redis primary the sentinels promoted"

// checkSentinelLogs: p's `redis store` start-up line names the sentinels,
// the master name and the primary they named (not --redis-addr, unused
// with Sentinel), and the promotion from primary to promoted is logged
// once, naming both.
func checkSentinelLogs(t *testing.T, p *proc, sentinels []string, master, primary, promoted string) {
	t.Helper()
	start := p.logged("redis store")
	if start == nil || start["redis_sentinels"] != strings.Join(sentinels, ",") || start["redis_master"] != master ||
		start["redis_primary"] != primary || start["redis_addr"] != nil {
		t.Errorf("the redis store line %v, want the sentinels %v, master %s and primary %s", start, sentinels, master, primary)
	}
	p.waitLogged(promotedMsg, 1)
	var lines []map[string]any
	for _, m := range p.logLines() {
		if m["msg"] == promotedMsg {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 || lines[0]["redis_primary"] != promoted || lines[0]["previous"] != primary || lines[0]["redis_master"] != master {
		t.Errorf("promotion lines %v, want one naming %s (previous %s)", lines, promoted, primary)
	}
}
