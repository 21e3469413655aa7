package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSharedHTTPTables: the latency table pairs each run's memory and
// Redis load phases per kind with the p99 ratio and the verdict, and the
// scrape table reads bench/shared_latency.sh's counts.
func TestSharedHTTPTables(t *testing.T) {
	in := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(in, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	phase := func(p99 string) string {
		return `{"phases":[{"name":"setup","kinds":[]},{"name":"load","kinds":[` +
			`{"kind":"create","rate_per_s":150,"p50_ms":1,"p99_ms":` + p99 + `,"late":0},` +
			`{"kind":"livez","rate_per_s":100,"p50_ms":0.5,"p99_ms":2,"late":1}]}]}`
	}
	write("latency-memory-r1/result.json", phase("4"))
	write("latency-redis-r1/result.json", phase("10"))
	write("scrapes-redis.txt", "scrapes=1000\nidle_seconds=2e-3\nidle_fcalls=3\nopen_seconds=1.5\nopen_fcalls=4\nadmin_seconds=0.5\nadmin_fcalls=1001\n")
	var b bytes.Buffer
	sharedHTTP(&b, nil, in)
	out := b.String()
	wantLines(t, out,
		"| create (POST /v1/listings) | 150, 150 | 1 | 4 | 1 | 10 | 2.50 (2.50–2.50) | 0, 0 |",
		"**2.50** (target ≤ 2: **not met**)",
		"| renew (PUT .../lease) | not measured",
		"| `/metrics` (metrics listener) and `/readyz`, half each | 1000 | 1.50 | 4 | 2.7 |",
		"_Single reads on the Redis store not measured in this run._",
	)
}
