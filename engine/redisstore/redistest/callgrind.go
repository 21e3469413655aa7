package redistest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// CallgrindEnv, when it names a directory, runs every redis-server this
// package starts under valgrind's callgrind, its counts written there, so a
// benchmark can report the instructions Redis executed for it
// (Server.Instructions): a count that does not move with the machine's
// load, where microseconds on a shared machine do by 1.5x from hour to hour.
// Servers run about fifty times slower under it.
const CallgrindEnv = "RDV_CALLGRIND"

// callgrindArgs are the valgrind arguments that run bin under callgrind,
// writing to dir. Counting starts at once; Instructions zeroes the counts
// before what it measures.
func callgrindArgs(dir, bin string) []string {
	return []string{"--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "redis.%p"), bin}
}

// Instructions runs fn and answers how many instructions the server
// executed meanwhile (every thread, request parsing included), or false
// when the server was not started under callgrind (CallgrindEnv).
func (s *Server) Instructions(fn func()) (uint64, bool, error) {
	dir := s.callgrind
	if dir == "" {
		fn()
		return 0, false, nil
	}
	pid := strconv.Itoa(s.cmd.Process.Pid)
	if out, err := exec.Command("callgrind_control", "--zero", pid).CombinedOutput(); err != nil {
		return 0, false, fmt.Errorf("callgrind_control --zero: %v: %s", err, out)
	}
	fn()
	before, _ := filepath.Glob(filepath.Join(dir, "redis."+pid+".*"))
	if out, err := exec.Command("callgrind_control", "--dump", pid).CombinedOutput(); err != nil {
		return 0, false, fmt.Errorf("callgrind_control --dump: %v: %s", err, out)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "redis."+pid+".*"))
	for _, f := range after {
		if !slices.Contains(before, f) {
			n, err := callgrindSummary(f)
			return n, err == nil, err
		}
	}
	return 0, false, fmt.Errorf("callgrind wrote no dump for pid %s in %s", pid, dir)
}

// callgrindSummary reads the instruction count of one callgrind dump.
func callgrindSummary(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "summary: "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s has no summary line", path)
}

// MeasureInstructions runs fn, b.N calls of inner items each, and when the
// server runs under callgrind reports the instructions it executed per call
// (redis-instr/op) and, for more than one item a call, per item
// (redis-instr/refresh).
func (s *Server) MeasureInstructions(b *testing.B, inner int, fn func()) {
	b.Helper()
	n, counted, err := s.Instructions(fn)
	if err != nil {
		b.Fatal(err)
	}
	if !counted {
		return
	}
	b.ReportMetric(float64(n)/float64(b.N), "redis-instr/op")
	if inner > 1 {
		b.ReportMetric(float64(n)/float64(b.N*inner), "redis-instr/refresh")
	}
}
