package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	rates          []float64 // pages/s per instance
	pages          float64   // pages served in the wrk window, all instances
	non2xx         int
	cpuPerPage     float64 // Redis CPU per page, µs (redis only; < 0 unknown)
	load           string
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
		if sum == nil {
			continue
		}
		for i := 1; i <= b.instances; i++ {
			rate, pages, non2xx, ok := readWrk(filepath.Join(d, fmt.Sprintf("wrk-%d.txt", i)))
			if !ok {
				b.rates = nil
				break
			}
			b.rates = append(b.rates, rate)
			b.pages += pages
			b.non2xx += non2xx
		}
		if len(b.rates) == 0 {
			continue
		}
		b.cpuPerPage = -1
		if b.store == "redis" {
			b.cpuPerPage = browseCPU(sum, b.pages)
		}
		b.load = sum["loadavg_start"]
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

// browseCPU is the Redis CPU per page in µs: FCALL time over the wrk
// window less the load tester's alone over a window of the same length,
// divided by the pages; -1 when a reading is missing.
func browseCPU(sum map[string]string, pages float64) float64 {
	read := func(k string) (t, usec float64, ok bool) {
		f := strings.Fields(sum[k])
		if len(f) != 3 {
			return 0, 0, false
		}
		t, e1 := strconv.ParseFloat(f[0], 64)
		usec, e2 := strconv.ParseFloat(f[2], 64)
		return t, usec, e1 == nil && e2 == nil
	}
	qt0, qu0, ok1 := read("quiet_start")
	qt1, qu1, ok2 := read("quiet_end")
	wt0, wu0, ok3 := read("wrk_start")
	wt1, wu1, ok4 := read("wrk_end")
	if !ok1 || !ok2 || !ok3 || !ok4 || qt1 <= qt0 || wt1 <= wt0 || pages <= 0 {
		return -1
	}
	background := (qu1 - qu0) * (wt1 - wt0) / (qt1 - qt0)
	return max(0, (wu1-wu0)-background) / pages
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
	mem := map[int]float64{} // run → the memory store's pages/s
	for _, b := range runs {
		if b.store == "memory" {
			mem[b.run] = b.rates[0]
		}
	}
	fmt.Fprintln(w, "The 100-item browse page (`GET /v1/listings?protocol_version=7&limit=100`) under `wrk -t1 -c16 -d5s`, one wrk per instance at once, 25,000 listings held live by `rendezvous-load --mode load --listings 25000` (presence refreshed, leases renewed while wrk runs); the memory store on one instance, the Redis store on 1, 2 and 3 instances of one deployment, the configurations alternating in each run. Redis CPU per page: INFO commandstats FCALL time over the wrk window less the load tester's alone over as long, divided by the pages (`bench/browse.sh`):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| instances | run | store | pages/s per instance | pages/s, all instances | ratio per instance ÷ memory | Redis CPU per page | non-2xx | load avg at start |")
	fmt.Fprintln(w, "|--:|--:|---|--:|--:|--:|--:|--:|---|")
	ratios := map[int][]float64{}
	cpus := map[int][]float64{}
	for _, b := range runs {
		per := sumOf(b.rates) / float64(len(b.rates))
		ratio, cpu := "", ""
		if b.store == "redis" {
			if m := mem[b.run]; m > 0 {
				ratios[b.instances] = append(ratios[b.instances], per/m)
				ratio = fmtRatio(per / m)
			}
			if b.cpuPerPage >= 0 {
				cpus[b.instances] = append(cpus[b.instances], b.cpuPerPage)
				cpu = fmt.Sprintf("%s µs", fmtVal(b.cpuPerPage))
			}
		}
		fmt.Fprintf(w, "| %d | %d | %s | %.0f | %.0f | %s | %s | %d | %s |\n", b.instances, b.run, b.store, per, sumOf(b.rates), ratio, cpu, b.non2xx, b.load)
	}
	fmt.Fprintln(w)
	for _, n := range []int{1, 2, 3} {
		var parts []string
		if r := ratios[n]; len(r) > 0 {
			med, lo, hi := medianRange(r)
			s := fmt.Sprintf("ratio per instance ÷ memory **%s** (range %s–%s)", fmtRatio(med), fmtRatio(lo), fmtRatio(hi))
			if n == 1 {
				s += fmt.Sprintf(", target ≥ %.1f: %s", targetBrowseRatio, verdict(med >= targetBrowseRatio))
			}
			parts = append(parts, s)
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
}
