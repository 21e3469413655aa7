package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/internal/haevidence"
)

// jsonRun builds a `go test -json` stream: events of (package, test,
// action, output).
func jsonRun(t *testing.T, events [][4]string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range events {
		line, err := json.Marshal(map[string]string{"Action": e[2], "Package": "github.com/rendezvous/rendezvous/" + e[0], "Test": e[1], "Output": e[3]})
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

const (
	killLine = `{"scenario":"instance-sigkill","description":"SIGKILL of one of three instances under load","answers":{"success":950,"service_unavailable":3,"untyped":0},"recovery_s":1.25,"recovery_bound_s":3,"lost_admitted":0,"double_introductions":0,"ceiling_breaches":0,"cross_tenant_reads":0}`
	// outageLine has untyped answers and a recovery over its bound.
	partitionLine = `{"scenario":"primary-partition","description":"primary cut off","answers":{"success":20,"untyped":0},"recovery_s":2.5,"recovery_bound_s":5,"lost_admitted":7,"lost_stated":"writes within the partition bound","double_introductions":0,"ceiling_breaches":0,"cross_tenant_reads":0}`
	outageLine    = `{"scenario":"redis-outage","description":"redis-server killed mid-load","answers":{"service_unavailable":40,"success":10,"untyped":2},"recovery_s":9.5,"recovery_bound_s":5,"lost_admitted":0,"double_introductions":0,"ceiling_breaches":0,"cross_tenant_reads":1}`
)

// TestRenderHA: a run's evidence lines become the scenario list and the
// table (answers by outcome, most first, untyped always shown; recovery
// with its bound), the page's prose around the results markers is kept and
// the previous run's region replaced, and everything off is flagged: an
// untyped answer, a recovery over its bound, a cross-tenant read, a failed
// test, a test that ended without its line, a skipped test with its
// reason, an expected scenario that is not in the run, an unreadable line.
func TestRenderHA(t *testing.T) {
	stream := jsonRun(t, [][4]string{
		{"client", "TestHAInstanceKill", "run", "=== RUN   TestHAInstanceKill\n"},
		{"client", "TestHAInstanceKill", "output", "    failover_redis_test.go:200: 6 listings moved\n"},
		{"client", "TestHAInstanceKill", "output", "    failover_redis_test.go:210: ha-evidence: " + killLine + "\n"},
		{"client", "TestHAInstanceKill", "pass", ""},
		{"cmd/rendezvous", "TestHARedisOutage", "run", ""},
		{"cmd/rendezvous", "TestHARedisOutage/redis", "output", "    e2e_redis_outage_test.go:99: ha-evidence: " + outageLine + "\n"},
		{"cmd/rendezvous", "TestHARedisOutage/redis", "pass", ""},
		{"cmd/rendezvous", "TestHARedisOutage", "fail", ""},
		{"cmd/rendezvous", "TestHAPartition", "output", "    p_test.go:9: ha-evidence: " + partitionLine + "\n"},
		{"cmd/rendezvous", "TestHAPartition", "pass", ""},
		{"cmd/rendezvous", "TestHANoLine", "output", "    x_test.go:1: nothing logged\n"},
		{"cmd/rendezvous", "TestHANoLine", "pass", ""},
		{"engine/redisstore", "TestHASentinel", "output", "    redistest.go:40: redis-sentinel not installed\n"},
		{"engine/redisstore", "TestHASentinel", "output", "--- SKIP: TestHASentinel (0.00s)\n"},
		{"engine/redisstore", "TestHASentinel", "skip", ""},
		{"engine/redisstore", "TestHABroken", "output", "    b_test.go:3: ha-evidence: {not json\n"},
		{"engine/redisstore", "TestHABroken", "pass", ""},
	})
	doc := filepath.Join(t.TempDir(), "ha.md")
	writer(t)(doc, "# HA\n\nProse before.\n\n"+marker+"\nold run\n"+endMarker+"\n\nProse after.\n")
	m := haMeta{Command: "make ha-evidence", Date: time.Date(2026, 12, 1, 19, 0, 0, 0, time.UTC), Machine: []string{"cpu:    2", "kernel: linux 6.1.0", "redis:  Redis server v=7.0.15"}}
	flags, err := renderHA(strings.NewReader("build output that is not json\n"+stream), doc, []string{"instance-sigkill", "primary-partition", "instance-partition"}, m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	wantLines(t, page,
		"Prose before.", "Prose after.",
		"Run on 2026-12-01 19:00 UTC:\n\n```\nmake ha-evidence\ncpu:    2\nkernel: linux 6.1.0\nredis:  Redis server v=7.0.15\n```",
		"- **instance-sigkill** (`TestHAInstanceKill`, client): SIGKILL of one of three instances under load",
		"- **redis-outage** (`TestHARedisOutage/redis`, cmd/rendezvous): redis-server killed mid-load",
		"| instance-sigkill | success 950, service_unavailable 3, untyped 0 | 1.25 s (≤ 3 s) | 0 | 0 | 0 | 0 | met |",
		"| primary-partition | success 20, untyped 0 | 2.50 s (≤ 5 s) | 7 (stated: writes within the partition bound) | 0 | 0 | 0 | met |",
		"| redis-outage | service_unavailable 40, success 10, untyped 2 | 9.50 s (≤ 5 s) | 0 | 0 | 0 | 1 | **not met**: 2 untyped answers; recovery over its bound; 1 cross-tenant reads |",
	)
	if strings.Contains(page, "old run") {
		t.Errorf("the previous run's region is still there:\n%s", page)
	}
	if strings.Index(page, "instance-sigkill |") > strings.Index(page, "redis-outage |") {
		t.Errorf("scenarios not in name order:\n%s", page)
	}
	wantFlags := []string{
		"redis-outage: 2 untyped answers",
		"redis-outage: recovery over its bound",
		"redis-outage: 1 cross-tenant reads",
		"instance-partition: expected scenario missing from the run",
		"TestHARedisOutage (cmd/rendezvous): test failed",
		"TestHANoLine (cmd/rendezvous): no evidence line (scenario missing)",
		"TestHASentinel (engine/redisstore): skipped: redistest.go:40: redis-sentinel not installed",
		"TestHABroken (engine/redisstore): no evidence line (scenario missing)",
		`TestHABroken: unreadable evidence line "{not json"`,
	}
	if strings.Join(flags, "\n") != strings.Join(wantFlags, "\n") {
		t.Errorf("flags:\n%s\nwant:\n%s", strings.Join(flags, "\n"), strings.Join(wantFlags, "\n"))
	}
	for _, f := range wantFlags {
		if !strings.Contains(page, "- "+f+"\n") {
			t.Errorf("page does not flag %q:\n%s", f, page)
		}
	}

	// A clean run flags nothing and says so; running it again keeps one
	// results region.
	clean := jsonRun(t, [][4]string{{"client", "TestHAInstanceKill", "output", "    f.go:1: ha-evidence: " + killLine + "\n"}, {"client", "TestHAInstanceKill", "pass", ""}})
	for range 2 {
		if flags, err = renderHA(strings.NewReader(clean), doc, []string{"instance-sigkill"}, m); err != nil || len(flags) != 0 {
			t.Fatalf("clean run: flags %v, err %v", flags, err)
		}
	}
	b, _ = os.ReadFile(doc)
	page = string(b)
	if !strings.Contains(page, "Every scenario test passed, logged its line, and stayed within its bounds.") ||
		strings.Count(page, marker) != 1 || strings.Count(page, endMarker) != 1 || strings.Contains(page, "redis-outage") {
		t.Errorf("clean run page:\n%s", page)
	}
}

// TestRenderHAEmpty: a run in which no test ran says so and flags it and
// the missing scenario, and a scenario without answers or without a
// measured recovery (when it has a bound) is not met.
func TestRenderHAEmpty(t *testing.T) {
	doc := filepath.Join(t.TempDir(), "ha.md")
	flags, err := renderHA(strings.NewReader(""), doc, []string{"instance-sigkill"}, haMeta{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	if !strings.Contains(string(b), "_No scenario logged an evidence line in this run._") ||
		strings.Join(flags, "\n") != "instance-sigkill: expected scenario missing from the run\nno scenario test ran (check the test name pattern and packages)" {
		t.Errorf("flags %v, page:\n%s", flags, b)
	}
	e := Evidence{Record: haevidence.Record{RecoveryBoundS: new(3.0)}}
	if got := strings.Join(e.breaches(), "; "); got != "no answers recorded; recovery not measured" {
		t.Errorf("breaches: %s", got)
	}
}
