package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWritePages: each area run gets a page of its own with the machine,
// the commands and its tables; an area not named is left untouched; a
// failed check is named; the baseline declarations of the area document
// are honoured.
func TestWritePages(t *testing.T) {
	in, docs, results := t.TempDir(), t.TempDir(), t.TempDir()
	write := writer(t)
	write(filepath.Join(in, "meta.txt"), "cpu:         Some CPU (/proc/cpuinfo), 2 CPUs\nkernel:      Linux 6.1\n")
	write(filepath.Join(in, "meta-store.txt"), "store: 2026-12-01 10:00 UTC\n  go test -run '^$' -bench . ./bench/\n")
	write(filepath.Join(in, "store.txt"), sampleOutput)
	write(filepath.Join(in, "store.benchstat.txt"), "benchstat says hi\n")
	write(filepath.Join(in, "http.txt"), "cpu: Go's CPU\npkg: x/httpapi\nBenchmarkH/bare-2 10 100 ns/op\nBenchmarkH/bare_page-2 10 400 ns/op\nBenchmarkH/browse-2 10 800 ns/op\n")
	write(filepath.Join(docs, "http.md"), "# HTTP\n\n<!-- baseline: H/browse = H/bare_page -->\n")
	shed := func(rss float64, ok bool) string {
		checks := `[{"name":"fill.listings","ok":true}]`
		if !ok {
			checks = `[{"name":"shed.p99","ok":false,"detail":"too slow"}]`
		}
		return `{"mode":"shed","seconds":30,"ceilings":{"listings":25000,"presence":25000,"attempts":10000},
		"fill":{"listings":{"admitted":25000,"seconds":1.2},"presence":{"admitted":25000,"seconds":0.3},"attempts":{"admitted":10000,"seconds":0.5},"total_seconds":2,"server_rss_mib":` + ftoa(rss) + `},
		"shed":{"overload_factor":2,"offered_over_ceiling":35000,"typed_shed":35000,"typed_shed_pct":100,"shed_p99_ms":1.5,"shed_answer_p99_ms":0.75},
		"checks":` + checks + `}`
	}
	write(filepath.Join(in, "load-r1", "result.json"), shed(70, true))
	write(filepath.Join(in, "load-r2", "result.json"), shed(90, false))
	write(filepath.Join(in, "load-r3", "result.json"), shed(80, true))
	untouched := filepath.Join(results, "udp.md")
	write(untouched, "an earlier run's page\n")

	got, err := WritePages(in, docs, results, []string{"store", "http", "load"}, time.Unix(0, 0))
	if err != nil || len(got) != 3 {
		t.Fatalf("wrote %v: %v", got, err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(results, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	store, http, load := read("store.md"), read("http.md"), read("load.md")
	for _, c := range []struct{ page, want string }{
		{store, "**510×**"}, {store, "benchstat says hi"}, {store, "kernel:      Linux 6.1"}, {store, "go test -run '^$' -bench . ./bench/"},
		{store, "[docs/benchmarks/store.md](../store.md)"},
		{http, "cpu (go):    Go's CPU"}, {http, "`x/httpapi H/bare_page` | 400 ns | **0.50×**"},
		{load, "| run 1 | run 2 | run 3 |"}, {load, "| server RSS at full fill, MiB | 70.0 | 90.0 | 80.0 | **80.0** (70.0–90.0) |"},
		{load, "- run 2: **FAILED** `shed.p99` (too slow)"}, {load, "- run 1: all checks passed"}, {load, "_No UDP rate result in this run._"},
	} {
		if !strings.Contains(c.page, c.want) {
			t.Fatalf("page lacks %q:\n%s", c.want, c.page)
		}
	}
	if b, _ := os.ReadFile(untouched); string(b) != "an earlier run's page\n" {
		t.Fatalf("an area not run was rewritten: %q", b)
	}
	// Bad benchmark output is an error naming the file.
	write(filepath.Join(in, "udp.txt"), "BenchmarkX-2 100 1 ns/op 2\n")
	if _, err := WritePages(in, docs, results, []string{"udp"}, time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "udp.txt") {
		t.Fatalf("bad udp.txt: %v", err)
	}
}

// TestComparePage: the coturn rounds each give a ratio; the page gives the
// median with the range.
func TestComparePage(t *testing.T) {
	in, results := t.TempDir(), t.TempDir()
	write := writer(t)
	for i, rates := range [][2]string{{"100000", "150000"}, {"100000", "90000"}, {"100000", "120000"}} {
		n := string(rune('1' + i))
		write(filepath.Join(in, "compare", "coturn-r"+n, "result.json"), `{"udp_rate":{"kind":"plain","answered_per_s":`+rates[0]+`,"server_cpu_us_per_answer":6}}`)
		write(filepath.Join(in, "compare", "ours-r"+n, "result.json"), `{"udp_rate":{"kind":"presence","answered_per_s":`+rates[1]+`,"server_cpu_us_per_answer":3}}`)
	}
	if _, err := WritePages(in, "", results, []string{"compare"}, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(results, "compare.md"))
	if want := "Rate ratio rendezvous ÷ coturn: **1.20**, median of 3 rounds (range 0.90–1.50"; !strings.Contains(string(b), want) {
		t.Fatalf("lacks %q:\n%s", want, b)
	}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
