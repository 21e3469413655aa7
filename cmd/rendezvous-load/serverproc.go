package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ServerUsage is the server's resident memory and CPU time at one moment,
// read from /proc when the PID is known (same machine) or else from the
// process metrics in /metrics.
type ServerUsage struct {
	RSSBytes   uint64  `json:"rss_bytes"`
	CPUSeconds float64 `json:"cpu_seconds"`
	Source     string  `json:"source"`
}

// clockTicks is USER_HZ, 100 on every Linux platform Go supports.
const clockTicks = 100

func (r *Run) serverUsage() (ServerUsage, error) {
	if r.cfg.ServerPID > 0 {
		return procUsage(r.cfg.ServerPID)
	}
	if !r.cfg.needsHTTP() {
		// A plain STUN server (coturn) has no /metrics to ask.
		return ServerUsage{}, fmt.Errorf("no --server-pid for the STUN server")
	}
	body, err := r.api.metrics(r.ctx)
	if err != nil {
		return ServerUsage{}, err
	}
	return metricsUsage(body)
}

func procUsage(pid int) (ServerUsage, error) {
	u := ServerUsage{Source: "/proc/" + strconv.Itoa(pid)}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, fmt.Errorf("cannot read server status: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			u.RSSBytes = kb * 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, fmt.Errorf("cannot read server stat: %w", err)
	}
	// Fields after the parenthesised command name: utime is 14th, stime 15th overall.
	if i := bytes.LastIndexByte(stat, ')'); i > 0 {
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 12 {
			ut, _ := strconv.ParseUint(f[11], 10, 64)
			st, _ := strconv.ParseUint(f[12], 10, 64)
			u.CPUSeconds = float64(ut+st) / clockTicks
		}
	}
	return u, nil
}

// metricsUsage reads process_resident_memory_bytes and
// process_cpu_seconds_total from Prometheus text.
func metricsUsage(body []byte) (ServerUsage, error) {
	u := ServerUsage{Source: "/metrics"}
	v := metricValues(body, "process_resident_memory_bytes", "process_cpu_seconds_total")
	rss, ok1 := v["process_resident_memory_bytes"]
	cpu, ok2 := v["process_cpu_seconds_total"]
	if !ok1 && !ok2 {
		return u, fmt.Errorf("/metrics has no process_resident_memory_bytes or process_cpu_seconds_total (give --server-pid)")
	}
	u.RSSBytes, u.CPUSeconds = uint64(rss), cpu
	return u, nil
}

// metricValues returns the values of the named unlabelled series in
// Prometheus text: "# HELP"/"# TYPE" and other comment lines, labelled
// series (histogram buckets among them) and a trailing timestamp are
// tolerated and ignored.
func metricValues(body []byte, names ...string) map[string]float64 {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || strings.HasPrefix(f[0], "#") || !want[f[0]] {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// procFDs counts the open file descriptors of process pid.
func procFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("cannot list the server's fds: %w", err)
	}
	return len(ents), nil
}
