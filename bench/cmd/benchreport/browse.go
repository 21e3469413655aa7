package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// The shared-state area's browse measurement (bench/browse.sh): the
// 100-item page HTTP serves, under wrk, on the memory store and on the
// Redis store at 1, 2 and 3 instances, each with 25,000 listings held live
// by the load tester; Redis CPU per page from INFO commandstats.

const (
	targetBrowseRatio = 0.5  // one Redis instance's pages/s ÷ the memory store's
	targetBrowseCPUUS = 10.0 // Redis CPU per page, µs
)

// browseRun is one configuration of one run.
type browseRun struct {
	run, instances int
	store          string
	// live: wrk while the load tester runs; paused: with it stopped.
	live, paused browseWindow
	cpuPerPage   float64 // Redis CPU per page over the paused window, µs (redis only; < 0 unknown)
	callsPerPage float64 // FCALLs per page over the paused window
	load         string
	// liveCores: the cores the instances, redis-server and the load
	// tester used over the live window (ok false: not recorded).
	liveCores   [3]float64
	liveCoresOK bool
}

// browseWindow is one wrk window: pages/s per instance, pages, non-2xx.
type browseWindow struct {
	rates  []float64
	pages  float64
	non2xx int
}

func (w *browseWindow) perInstance() float64 { return sumOf(w.rates) / float64(len(w.rates)) }

// readWindow reads DIR/wrk-WINDOW-<i>.txt for each instance.
func readWindow(dir, window string, instances int) (browseWindow, bool) {
	var w browseWindow
	for i := 1; i <= instances; i++ {
		rate, pages, non2xx, ok := readWrk(filepath.Join(dir, fmt.Sprintf("wrk-%s-%d.txt", window, i)))
		if !ok {
			return w, false
		}
		w.rates = append(w.rates, rate)
		w.pages += pages
		w.non2xx += non2xx
	}
	return w, true
}

// readBrowse reads every $in/browse-<store>-n<N>-r<R>/.
func readBrowse(in string) []browseRun {
	dirs, _ := filepath.Glob(filepath.Join(in, "browse-*-n*-r*"))
	var runs []browseRun
	for _, d := range dirs {
		var b browseRun
		if _, err := fmt.Sscanf(strings.ReplaceAll(filepath.Base(d), "-", " "), "browse %s n%d r%d", &b.store, &b.instances, &b.run); err != nil {
			continue
		}
		sum := readKV(filepath.Join(d, "summary.txt"))
		var ok1, ok2 bool
		b.live, ok1 = readWindow(d, "live", b.instances)
		b.paused, ok2 = readWindow(d, "paused", b.instances)
		if sum == nil || !ok1 || !ok2 {
			continue
		}
		b.cpuPerPage = -1
		if b.store == "redis" {
			b.cpuPerPage, b.callsPerPage = windowCPU(sum, "paused", b.paused.pages)
		}
		b.load = sum["loadavg_start"]
		b.liveCores, b.liveCoresOK = windowCores(sum, "live")
		runs = append(runs, b)
	}
	slices.SortFunc(runs, func(x, y browseRun) int {
		if x.instances != y.instances {
			return x.instances - y.instances
		}
		if x.run != y.run {
			return x.run - y.run
		}
		return strings.Compare(x.store, y.store)
	})
	return runs
}

// readKV reads key=value lines.
func readKV(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	kv := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			kv[k] = strings.TrimSpace(v)
		}
	}
	return kv
}

// readWrk reads a wrk report: requests per second, requests, non-2xx answers.
func readWrk(path string) (rate, requests float64, non2xx int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			rate, _ = strconv.ParseFloat(f[1], 64)
			ok = true
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			requests, _ = strconv.ParseFloat(f[0], 64)
		case strings.HasPrefix(strings.TrimSpace(line), "Non-2xx or 3xx responses:"):
			non2xx, _ = strconv.Atoi(f[len(f)-1])
		}
	}
	return rate, requests, non2xx, ok && requests > 0
}

// windowCPU is the Redis CPU (µs) and the FCALLs per page over a
// window: its FCALL time and calls divided by the pages; -1 when a
// reading is missing.
func windowCPU(sum map[string]string, window string, pages float64) (usec, calls float64) {
	read := func(k string) (calls, usec float64, ok bool) {
		f := strings.Fields(sum[k])
		if len(f) != 3 {
			return 0, 0, false
		}
		calls, e1 := strconv.ParseFloat(f[1], 64)
		usec, e2 := strconv.ParseFloat(f[2], 64)
		return calls, usec, e1 == nil && e2 == nil
	}
	c0, u0, ok0 := read(window + "_start")
	c1, u1, ok1 := read(window + "_end")
	if !ok0 || !ok1 || pages <= 0 {
		return -1, -1
	}
	return (u1 - u0) / pages, (c1 - c0) / pages
}

// windowCores is the cores the instances, redis-server and the load
// tester used over a window: bench/browse.sh's WINDOW_cpu_start/end
// ("<ticks per second> <instances> <redis> <load tester>", in clock
// ticks) over the time between WINDOW_start and WINDOW_end.
func windowCores(sum map[string]string, window string) (cores [3]float64, ok bool) {
	at := func(k string) (float64, bool) {
		f := strings.Fields(sum[k])
		if len(f) == 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(f[0], 64)
		return v, err == nil
	}
	ticks := func(k string) (v [4]float64, ok bool) {
		f := strings.Fields(sum[k])
		if len(f) != 4 {
			return v, false
		}
		for i := range f {
			var err error
			if v[i], err = strconv.ParseFloat(f[i], 64); err != nil {
				return v, false
			}
		}
		return v, v[0] > 0
	}
	t0, ok0 := at(window + "_start")
	t1, ok1 := at(window + "_end")
	c0, ok2 := ticks(window + "_cpu_start")
	c1, ok3 := ticks(window + "_cpu_end")
	if !ok0 || !ok1 || !ok2 || !ok3 || t1 <= t0 {
		return cores, false
	}
	for i := range cores {
		cores[i] = (c1[i+1] - c0[i+1]) / c0[0] / (t1 - t0)
	}
	return cores, true
}

func sumOf(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// browseTables renders the browse measurement, or says it did not run.
func browseTables(w io.Writer, in string) {
	runs := readBrowse(in)
	fmt.Fprintln(w)
	if len(runs) == 0 {
		fmt.Fprintln(w, "_Browse page over HTTP not measured in this run._")
		return
	}
	memLive, memPaused := map[int]float64{}, map[int]float64{} // run → the memory store's pages/s
	for _, b := range runs {
		if b.store == "memory" {
			memLive[b.run], memPaused[b.run] = b.live.perInstance(), b.paused.perInstance()
		}
	}
	fmt.Fprintln(w, "The 100-item browse page (`GET /v1/listings?protocol_version=7&limit=100`) under `wrk -t1 -c16 -d5s`, one wrk per instance at once, over 25,000 listings held live by `rendezvous-load --mode load --listings 25000`: first while it runs (refreshing presence, renewing leases: the log moves), then with it stopped (SIGSTOP), when every FCALL is a page's. The memory store on one instance, the Redis store on 1, 2 and 3 instances of one deployment, the configurations alternating in each run; each Redis row's ratio is its pages/s per instance ÷ the memory store's in the same run and window. Redis CPU per page: INFO commandstats FCALL time over the stopped window ÷ its pages, which counts every call a page causes: its share of the browse reads (`rdv_browse_sync`, shared by concurrent pages), which also bring the instance's copy of the revocations its caller is checked against; FCALLs per page says how many (`bench/browse.sh`):")
	fmt.Fprintln(w)
	tableHead(w, "rrlrrrrrrrrl", "instances", "run", "store", "pages/s per instance, load tester running", "ratio", "pages/s per instance, load tester stopped", "ratio", "pages/s, all instances (stopped)", "Redis CPU per page", "FCALLs per page", "non-2xx", "load avg at start")
	ratios, stopped, cpus := map[int][]float64{}, map[int][]float64{}, map[int][]float64{}
	for _, b := range runs {
		live, paused := b.live.perInstance(), b.paused.perInstance()
		rl, rp, cpu, calls := "", "", "", ""
		if b.store == "redis" {
			if m := memLive[b.run]; m > 0 {
				rl = fmtRatio(live / m)
				ratios[b.instances] = append(ratios[b.instances], live/m)
			}
			if m := memPaused[b.run]; m > 0 {
				rp = fmtRatio(paused / m)
				stopped[b.instances] = append(stopped[b.instances], paused/m)
			}
			if b.cpuPerPage >= 0 {
				cpus[b.instances] = append(cpus[b.instances], b.cpuPerPage)
				cpu = fmt.Sprintf("%s µs", fmtVal(b.cpuPerPage))
				calls = fmt.Sprintf("%.2f", b.callsPerPage)
			}
		}
		fmt.Fprintf(w, "| %d | %d | %s | %.0f | %s | %.0f | %s | %.0f | %s | %s | %d | %s |\n", b.instances, b.run, b.store, live, rl, paused, rp,
			sumOf(b.paused.rates), cpu, calls, b.live.non2xx+b.paused.non2xx, b.load)
	}
	fmt.Fprintln(w)
	for _, n := range []int{1, 2, 3} {
		var parts []string
		if r := ratios[n]; len(r) > 0 {
			med, lo, hi := medianRange(r)
			s := fmt.Sprintf("ratio per instance ÷ memory with the load tester running **%s** (range %s–%s)", fmtRatio(med), fmtRatio(lo), fmtRatio(hi))
			if n == 1 {
				s += fmt.Sprintf(", target ≥ %.1f: %s", targetBrowseRatio, verdict(med >= targetBrowseRatio))
			}
			parts = append(parts, s)
		}
		if r := stopped[n]; len(r) > 0 {
			med, lo, hi := medianRange(r)
			parts = append(parts, fmt.Sprintf("with it stopped **%s** (range %s–%s)", fmtRatio(med), fmtRatio(lo), fmtRatio(hi)))
		}
		if c := cpus[n]; len(c) > 0 {
			med, lo, hi := medianRange(c)
			parts = append(parts, fmt.Sprintf("Redis CPU per page **%s µs** (range %s–%s), target ≤ %.0f µs: %s",
				fmtVal(med), fmtVal(lo), fmtVal(hi), targetBrowseCPUUS, verdict(med <= targetBrowseCPUUS)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, "- %d instance(s), medians of the runs: %s.\n", n, strings.Join(parts, "; "))
		}
	}
	coresTable(w, runs)
}

// coresTable says where the machine's cores went while the load tester ran
// beside wrk: what the instances, Redis and the load tester used; the rest
// is wrk's and the system's.
func coresTable(w io.Writer, runs []browseRun) {
	var rows []browseRun
	for _, b := range runs {
		if b.liveCoresOK {
			rows = append(rows, b)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "The cores used over the window with the load tester running (%d on this machine; /proc/PID/stat, `bench/browse.sh`); the rest is wrk's and the system's:\n", runtime.NumCPU())
	fmt.Fprintln(w)
	tableHead(w, "rrlrrrr", "instances", "run", "store", "instances' cores", "redis-server's cores", "load tester's cores", "pages/s, all instances")
	for _, b := range rows {
		fmt.Fprintf(w, "| %d | %d | %s | %.2f | %.2f | %.2f | %.0f |\n", b.instances, b.run, b.store,
			b.liveCores[0], b.liveCores[1], b.liveCores[2], sumOf(b.live.rates))
	}
}
