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
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		switch name {
		case "process_resident_memory_bytes":
			v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err == nil {
				u.RSSBytes = uint64(v)
				found++
			}
		case "process_cpu_seconds_total":
			v, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err == nil {
				u.CPUSeconds = v
				found++
			}
		}
	}
	if found == 0 {
		return u, fmt.Errorf("/metrics has no process_resident_memory_bytes or process_cpu_seconds_total (give --server-pid)")
	}
	return u, nil
}
