package main

import (
	"bytes"
	"io"
	"sync"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/netio"
)

// exposition is what /metrics serves: the components' sets, then the Go
// runtime and process metrics (file descriptors included), as Prometheus
// text with a HELP and a TYPE line for every family, so `promtool check
// metrics` finds nothing to complain about.
//
// The metrics package writes "# HELP family" without text; write fills in
// the text from the components' tables, corrects the types the package
// gets wrong, and leaves out the families whose names break Prometheus
// naming rules.
type exposition struct {
	sets []*metrics.Set
	bufs sync.Pool // *bytes.Buffer, reused across scrapes
}

func newExposition(sets ...*metrics.Set) *exposition {
	// Process-wide: every metrics.Set writes HELP and TYPE lines from now on.
	metrics.ExposeMetadata(true)
	return &exposition{sets: sets, bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
}

// help is the HELP text of family, or "" when no component names it.
func help(family string) string {
	for _, f := range [...]func(string) string{httpapi.MetricHelp, netio.MetricHelp} {
		if h := f(family); h != "" {
			return h
		}
	}
	if h := processHelp[family]; h != "" {
		return h
	}
	return runtimeHelp[family]
}

// write renders one scrape to w.
func (e *exposition) write(w io.Writer) {
	raw := e.bufs.Get().(*bytes.Buffer)
	out := e.bufs.Get().(*bytes.Buffer)
	defer func() {
		raw.Reset()
		out.Reset()
		e.bufs.Put(raw)
		e.bufs.Put(out)
	}()
	for _, s := range e.sets {
		s.WritePrometheus(raw)
	}
	metrics.WriteProcessMetrics(raw)
	metrics.WriteFDMetrics(raw)
	annotate(out, raw.Bytes())
	_, _ = w.Write(out.Bytes()) // a scraper that went away is not an error here
}

// annotate copies the metrics package's text from raw to out, completing
// HELP lines, correcting TYPE lines and skipping omitted families. Every
// family's samples follow its HELP and TYPE lines.
func annotate(out *bytes.Buffer, raw []byte) {
	skip := false
	for len(raw) > 0 {
		line, rest, _ := bytes.Cut(raw, []byte{'\n'})
		raw = rest
		if family, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name := string(family)
			_, skip = omittedFamilies[name]
			if skip {
				continue
			}
			out.WriteString("# HELP ")
			out.WriteString(name)
			if h := help(name); h != "" {
				out.WriteByte(' ')
				out.WriteString(h)
			}
			out.WriteByte('\n')
			continue
		}
		if skip {
			continue
		}
		if meta, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
			family, _, _ := bytes.Cut(meta, []byte{' '})
			if t, ok := typeFixes[string(family)]; ok {
				out.WriteString("# TYPE ")
				out.Write(family)
				out.WriteByte(' ')
				out.WriteString(t)
				out.WriteByte('\n')
				continue
			}
		}
		out.Write(line)
		out.WriteByte('\n')
	}
}

// omittedFamilies are Go runtime families the metrics package exports under
// names Prometheus' naming rules reject (a counter without _total, a gauge
// ending in _count). Nothing here is used by the dashboards or alerts.
var omittedFamilies = map[string]struct{}{
	"go_cgo_calls_count": {},
	"go_cpu_count":       {},
	"go_gc_forced_count": {},
}

// typeFixes are families the metrics package declares with the wrong type:
// the process I/O totals only ever grow.
var typeFixes = map[string]string{
	"process_io_read_bytes_total":            "counter",
	"process_io_written_bytes_total":         "counter",
	"process_io_read_syscalls_total":         "counter",
	"process_io_write_syscalls_total":        "counter",
	"process_io_storage_read_bytes_total":    "counter",
	"process_io_storage_written_bytes_total": "counter",
}

// runtimeHelp is the HELP text of the Go runtime and process families the
// metrics package writes (github.com/VictoriaMetrics/metrics, Linux).
var runtimeHelp = map[string]string{
	"go_sched_latencies_seconds":                    "Time goroutines spent runnable before running, in seconds.",
	"go_mutex_wait_seconds_total":                   "Time goroutines spent blocked on a sync.Mutex or sync.RWMutex, in seconds.",
	"go_gc_mark_assist_cpu_seconds_total":           "CPU time goroutines spent helping the GC mark, in seconds.",
	"go_gc_cpu_seconds_total":                       "CPU time spent in the garbage collector, in seconds.",
	"go_gc_pauses_seconds":                          "Stop-the-world pause durations of the garbage collector, in seconds.",
	"go_scavenge_cpu_seconds_total":                 "CPU time spent returning memory to the OS, in seconds.",
	"go_memlimit_bytes":                             "Go memory limit (GOMEMLIMIT), in bytes.",
	"go_memstats_alloc_bytes":                       "Bytes of allocated heap objects.",
	"go_memstats_alloc_bytes_total":                 "Bytes allocated for heap objects since the start.",
	"go_memstats_buck_hash_sys_bytes":               "Bytes in profiling bucket hash tables.",
	"go_memstats_frees_total":                       "Heap objects freed since the start.",
	"go_memstats_gc_cpu_fraction":                   "Fraction of CPU time used by the GC since the start.",
	"go_memstats_gc_sys_bytes":                      "Bytes in garbage collection metadata.",
	"go_memstats_heap_alloc_bytes":                  "Bytes of allocated heap objects.",
	"go_memstats_heap_idle_bytes":                   "Bytes in idle (unused) heap spans.",
	"go_memstats_heap_inuse_bytes":                  "Bytes in in-use heap spans.",
	"go_memstats_heap_objects":                      "Allocated heap objects.",
	"go_memstats_heap_released_bytes":               "Bytes of physical memory returned to the OS.",
	"go_memstats_heap_sys_bytes":                    "Bytes of heap memory obtained from the OS.",
	"go_memstats_last_gc_time_seconds":              "Time the last garbage collection finished, in seconds since the epoch.",
	"go_memstats_lookups_total":                     "Pointer lookups done by the runtime since the start.",
	"go_memstats_mallocs_total":                     "Heap objects allocated since the start.",
	"go_memstats_mcache_inuse_bytes":                "Bytes in mcache structures.",
	"go_memstats_mcache_sys_bytes":                  "Bytes of memory obtained from the OS for mcache structures.",
	"go_memstats_mspan_inuse_bytes":                 "Bytes in mspan structures.",
	"go_memstats_mspan_sys_bytes":                   "Bytes of memory obtained from the OS for mspan structures.",
	"go_memstats_next_gc_bytes":                     "Heap size target of the next garbage collection, in bytes.",
	"go_memstats_other_sys_bytes":                   "Bytes in miscellaneous runtime allocations.",
	"go_memstats_stack_inuse_bytes":                 "Bytes in stack spans.",
	"go_memstats_stack_sys_bytes":                   "Bytes of stack memory obtained from the OS.",
	"go_memstats_sys_bytes":                         "Bytes of memory obtained from the OS in total.",
	"go_gc_duration_seconds":                        "Garbage collection pause durations, in seconds.",
	"go_gomaxprocs":                                 "GOMAXPROCS: the CPUs Go code may run on at once.",
	"go_goroutines":                                 "Goroutines that exist.",
	"go_threads":                                    "OS threads created by the runtime.",
	"go_info":                                       "Always 1; the label names the Go version.",
	"go_info_ext":                                   "Always 1; the labels name the compiler, GOARCH, GOOS and GOROOT of the build.",
	"process_cpu_seconds_system_total":              "CPU time spent in the kernel, in seconds.",
	"process_cpu_seconds_total":                     "CPU time spent in user and kernel mode, in seconds.",
	"process_cpu_seconds_user_total":                "CPU time spent in user mode, in seconds.",
	"process_major_pagefaults_total":                "Page faults that needed disk I/O.",
	"process_minor_pagefaults_total":                "Page faults served without disk I/O.",
	"process_num_threads":                           "OS threads of the process.",
	"process_resident_memory_bytes":                 "Resident memory (RSS), in bytes.",
	"process_start_time_seconds":                    "Start time of the process, in seconds since the epoch.",
	"process_virtual_memory_bytes":                  "Virtual memory size, in bytes.",
	"process_virtual_memory_peak_bytes":             "Peak virtual memory size, in bytes.",
	"process_resident_memory_peak_bytes":            "Peak resident memory, in bytes.",
	"process_resident_memory_anon_bytes":            "Resident anonymous memory, in bytes.",
	"process_resident_memory_file_bytes":            "Resident file-backed memory, in bytes.",
	"process_resident_memory_shared_bytes":          "Resident shared memory, in bytes.",
	"process_io_read_bytes_total":                   "Bytes read by read-like system calls.",
	"process_io_written_bytes_total":                "Bytes written by write-like system calls.",
	"process_io_read_syscalls_total":                "Read-like system calls.",
	"process_io_write_syscalls_total":               "Write-like system calls.",
	"process_io_storage_read_bytes_total":           "Bytes read from storage.",
	"process_io_storage_written_bytes_total":        "Bytes written to storage.",
	"process_pressure_cpu_waiting_seconds_total":    "Time some tasks of the cgroup waited for CPU (PSI), in seconds.",
	"process_pressure_cpu_stalled_seconds_total":    "Time all tasks of the cgroup waited for CPU (PSI), in seconds.",
	"process_pressure_io_waiting_seconds_total":     "Time some tasks of the cgroup waited for I/O (PSI), in seconds.",
	"process_pressure_io_stalled_seconds_total":     "Time all tasks of the cgroup waited for I/O (PSI), in seconds.",
	"process_pressure_memory_waiting_seconds_total": "Time some tasks of the cgroup waited for memory (PSI), in seconds.",
	"process_pressure_memory_stalled_seconds_total": "Time all tasks of the cgroup waited for memory (PSI), in seconds.",
	"process_cgroup_cpu_throttled_seconds_total":    "Time the cgroup was throttled by its CPU quota, in seconds.",
	"process_open_fds":                              "Open file descriptors.",
	"process_max_fds":                               "Limit of open file descriptors (RLIMIT_NOFILE).",
}
