package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSharedPage: the shared-state tables hold each figure against its
// target (met and not met; the refresh answering an offer is shown, not
// held to it), and the memory/redis pairs give one ratio each, reported as
// a median with its range.
func TestSharedPage(t *testing.T) {
	in, results := t.TempDir(), t.TempDir()
	write := writer(t)
	write(filepath.Join(in, "shared-state.txt"), "pkg: github.com/rendezvous/rendezvous/bench\n"+
		"BenchmarkRedisStore/op=presence-batch128-2 100 640000 ns/op 10000 ns/item 192 redis-us/op 3 redis-us/refresh\n"+
		"BenchmarkRedisStore/op=presence-batch128-offered-2 100 700000 ns/op 11000 ns/item 256 redis-us/op 4 redis-us/refresh\n"+
		"BenchmarkRedisStore/op=renew-2 100 150000 ns/op 40 redis-us/op\n")
	write(filepath.Join(in, "meta-shared-state.txt"), "shared-state: 2026-12-01 16:00 UTC\n")
	for n, rates := range map[string][2]string{"1": {"100000", "60000"}, "2": {"100000", "45000"}, "3": {"100000", "70000"}} {
		write(filepath.Join(in, "udprate-memory-r"+n, "result.json"), `{"mode":"udprate","udp_rate":{"kind":"presence","answered_per_s":`+rates[0]+`,"server_cpu_us_per_answer":4}}`)
		write(filepath.Join(in, "udprate-redis-r"+n, "result.json"), `{"mode":"udprate","udp_rate":{"kind":"presence","answered_per_s":`+rates[1]+`,"server_cpu_us_per_answer":7}}`)
	}
	if _, err := WritePages(in, "", results, []string{"shared-state"}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(results, "shared-state.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	wantLines(t, got,
		"| presence refresh, 128 per ApplyBatch (the server's fullest commit on Redis) | 640 µs  | 192 µs | **3 µs** | ≤ 2 µs: **not met** |",
		"| presence refresh answering a pending offer, 128 per ApplyBatch | 700 µs  | 256 µs | 4 µs | the offer is pending only until the host's next datagram |",
		"| lease renewal | 150 µs  | 40 µs | | |",
		"| listing creation | not measured |",
		"| 2 | 100000 | 45000 | 0.45 | 4.00 µs | 7.00 µs | 0, 0 |",
		"Rate ratio redis ÷ memory: **0.60**, median of 3 pairs (range 0.45–0.70; target ≥ 0.5 in every pair: **not met**)",
		"shared-state: 2026-12-01 16:00 UTC",
	)
}
