package main

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Sink keeps benchmark results alive.
var Sink int

// BenchmarkE2EJoinIntroduce drives the real binary over loopback: per
// operation one join over HTTP (keep-alive), the OFFER, both binds and both
// INTRODUCEs. Besides wall time it reports the server's CPU time per
// operation (from /proc), the figure that carries over to other hardware
// (ARCHITECTURE.md); allocs/op are the benchmark client's, not the server's.
// It measures the memory store; the Redis store's transitions are measured
// by BenchmarkRedisStore (bench/store_redis_test.go).
func BenchmarkE2EJoinIntroduce(b *testing.B) {
	p := startProc(b, "--max-attempts", "1000000", "--tenant-attempt-quota", "1000000", "--subject-attempt-quota", "1000000",
		"--max-idempotency", "1000000", "--tenant-idempotency-quota", "1000000", "--subject-idempotency-quota", "1000000")
	p.client = &http.Client{Timeout: hangGuard}
	h := publishHost(b, p, "bench-listing", "Bench host")
	client := newPeer(b, p.mediator)
	refreshed := time.Now()
	cpu0 := serverCPU(p)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if time.Since(refreshed) > 4*time.Second { // keep presence fresh, as a host would
			h.refresh()
			refreshed = time.Now()
		}
		j := p.join("bench-join-"+strconv.Itoa(i), h.pub.ListingID)
		h.offered(mustHandle(b, j.Handle))
		hc := introduce(b, h, client, j)
		Sink += int(hc[0])
	}
	b.StopTimer()
	if cpu := serverCPU(p) - cpu0; cpu >= 0 && b.N > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "server-cpu-µs/op")
	}
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		b.Fatalf("exit status %d", code)
	}
}

// serverCPU is the server process's user+system CPU time so far, or -1 if
// /proc cannot tell.
func serverCPU(p *proc) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.cmd.Process.Pid) + "/stat")
	if err != nil {
		return -1
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields overall, in clock ticks (USER_HZ = 100 on Linux).
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}
