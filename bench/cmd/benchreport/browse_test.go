package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowseTable: the browse table reads wrk's reports and the FCALL
// readings of bench/browse.sh, gives each Redis configuration its ratio to
// the memory store of the same run and its Redis CPU per page (the wrk
// window's FCALL time less the load tester's over as long), and holds the
// one-instance medians to the targets.
func TestBrowseTable(t *testing.T) {
	in := t.TempDir()
	write := writer(t)
	wrk := func(rate, requests int, non2xx int) string {
		s := fmt.Sprintf("Running 5s test @ http://x/v1/listings\n  %d requests in 5.00s, 1.0GB read\n", requests)
		if non2xx > 0 {
			s += fmt.Sprintf("  Non-2xx or 3xx responses: %d\n", non2xx)
		}
		return s + fmt.Sprintf("Requests/sec:   %d.00\nTransfer/sec:    1.00MB\n", rate)
	}
	write(filepath.Join(in, "browse-memory-n1-r1", "summary.txt"), "store=memory\ninstances=1\nloadavg_start=1.00 1.00 1.00\n")
	write(filepath.Join(in, "browse-memory-n1-r1", "wrk-1.txt"), wrk(10000, 50000, 0))
	// Load tester alone: 1,000,000 µs over 10 s; the wrk window 5 s: its
	// 500,000 µs are the load tester's, the other 250,000 µs the pages'.
	write(filepath.Join(in, "browse-redis-n1-r1", "summary.txt"), "store=redis\ninstances=1\nloadavg_start=2.00 2.00 2.00\n"+
		"quiet_start=100 10 0\nquiet_end=110 20 1000000\nwrk_start=110 20 1000000\nwrk_end=115 30 1750000\n")
	write(filepath.Join(in, "browse-redis-n1-r1", "wrk-1.txt"), wrk(6000, 30000, 0))
	write(filepath.Join(in, "browse-redis-n2-r1", "summary.txt"), "store=redis\ninstances=2\nloadavg_start=2.00 2.00 2.00\n"+
		"quiet_start=100 10 0\nquiet_end=105 20 500000\nwrk_start=105 20 500000\nwrk_end=110 30 1000000\n")
	write(filepath.Join(in, "browse-redis-n2-r1", "wrk-1.txt"), wrk(4000, 20000, 0))
	write(filepath.Join(in, "browse-redis-n2-r1", "wrk-2.txt"), wrk(3000, 15000, 7))
	var b bytes.Buffer
	browseTables(&b, in)
	got := b.String()
	for _, want := range []string{
		"| 1 | 1 | memory | 10000 | 10000 |  |  | 0 | 1.00 1.00 1.00 |",
		"| 1 | 1 | redis | 6000 | 6000 | 0.60 | 8.33 µs | 0 | 2.00 2.00 2.00 |",
		"| 2 | 1 | redis | 3500 | 7000 | 0.35 | 0 µs | 7 | 2.00 2.00 2.00 |",
		"- 1 instance(s), medians of the runs: ratio per instance ÷ memory **0.60** (range 0.60–0.60), target ≥ 0.5: met; Redis CPU per page **8.33 µs** (range 8.33–8.33), target ≤ 10 µs: met.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	var empty bytes.Buffer
	browseTables(&empty, t.TempDir())
	if !strings.Contains(empty.String(), "not measured") {
		t.Errorf("a run without the browse measurement: %q", empty.String())
	}
}
