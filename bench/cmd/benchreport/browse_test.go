package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestBrowseTable: the browse table reads wrk's reports and the FCALL
// readings of bench/browse.sh, gives each Redis configuration its ratios to
// the memory store of the same run and window and its Redis CPU per page
// and FCALLs (over the window with the load tester stopped ÷ its pages),
// and holds the one-instance medians to the targets; the cores each process
// used over the live window, where recorded (5 s, 100 ticks a second: 500
// ticks of the instance are one core).
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
	both := func(dir string, live, paused [][3]int) {
		for i := range live {
			write(filepath.Join(in, dir, fmt.Sprintf("wrk-live-%d.txt", i+1)), wrk(live[i][0], live[i][1], live[i][2]))
			write(filepath.Join(in, dir, fmt.Sprintf("wrk-paused-%d.txt", i+1)), wrk(paused[i][0], paused[i][1], paused[i][2]))
		}
	}
	write(filepath.Join(in, "browse-memory-n1-r1", "summary.txt"), "store=memory\ninstances=1\nloadavg_start=1.00 1.00 1.00\n")
	both("browse-memory-n1-r1", [][3]int{{10000, 50000, 0}}, [][3]int{{12000, 60000, 0}})
	// The stopped window: 240,000 µs of FCALL for 30,000 pages.
	write(filepath.Join(in, "browse-redis-n1-r1", "summary.txt"), "store=redis\ninstances=1\nloadavg_start=2.00 2.00 2.00\n"+
		"live_start=100 10 0\nlive_end=105 20 900000\npaused_start=106 20 900000\npaused_end=111 34520 1140000\n"+
		"live_cpu_start=100 1000 200 300\nlive_cpu_end=100 1500 300 400\n")
	both("browse-redis-n1-r1", [][3]int{{6000, 30000, 0}}, [][3]int{{6000, 30000, 0}})
	write(filepath.Join(in, "browse-redis-n2-r1", "summary.txt"), "store=redis\ninstances=2\nloadavg_start=2.00 2.00 2.00\n"+
		"live_start=100 10 0\nlive_end=105 20 500000\npaused_start=106 20 500000\npaused_end=111 30 850000\n")
	both("browse-redis-n2-r1", [][3]int{{4000, 20000, 0}, {3000, 15000, 7}}, [][3]int{{4000, 20000, 0}, {3000, 15000, 0}})
	var b bytes.Buffer
	browseTables(&b, in)
	got := b.String()
	wantLines(t, got,
		"| 1 | 1 | memory | 10000 |  | 12000 |  | 12000 |  |  | 0 | 1.00 1.00 1.00 |",
		"| 1 | 1 | redis | 6000 | 0.60 | 6000 | 0.50 | 6000 | 8 µs | 1.15 | 0 | 2.00 2.00 2.00 |",
		"| 2 | 1 | redis | 3500 | 0.35 | 3500 | 0.29 | 7000 | 10 µs | 0.00 | 7 | 2.00 2.00 2.00 |",
		"- 1 instance(s), medians of the runs: ratio per instance ÷ memory with the load tester running **0.60** (range 0.60–0.60), target ≥ 0.5: met; with it stopped **0.50** (range 0.50–0.50); Redis CPU per page **8 µs** (range 8–8), target ≤ 10 µs: met.",
		"| 1 | 1 | redis | 1.00 | 0.20 | 0.20 | 6000 |",
		"- 2 instance(s), medians of the runs: ratio per instance ÷ memory with the load tester running **0.35** (range 0.35–0.35); with it stopped **0.29** (range 0.29–0.29); Redis CPU per page **10 µs** (range 10–10), target ≤ 10 µs: met.",
	)
	var empty bytes.Buffer
	browseTables(&empty, t.TempDir())
	if !strings.Contains(empty.String(), "not measured") {
		t.Errorf("a run without the browse measurement: %q", empty.String())
	}
}
