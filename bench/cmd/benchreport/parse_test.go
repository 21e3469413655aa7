package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/rendezvous/rendezvous/bench
cpu: Test CPU @ 2.00GHz
BenchmarkStore/impl=mem/op=renew/listings=25000-2     1000000   1000 ns/op   0 B/op   0 allocs/op
BenchmarkStore/impl=mem/op=renew/listings=25000-2     1000000   1100 ns/op   0 B/op   0 allocs/op
BenchmarkStore/impl=mem/op=renew/listings=25000-2     1000000    900 ns/op   0 B/op   0 allocs/op
BenchmarkStore/impl=ref/op=renew/listings=25000-2        1000 500000 ns/op  96 B/op   3 allocs/op
BenchmarkStore/impl=ref/op=renew/listings=25000-2        1000 520000 ns/op  96 B/op   3 allocs/op
some log line
PASS
ok  	github.com/rendezvous/rendezvous/bench	12.3s
pkg: github.com/rendezvous/rendezvous/httpapi
BenchmarkHTTP/bare-2          200000   5000 ns/op   10 B/op  1 allocs/op
BenchmarkHTTP/browse100-2     100000  20000 ns/op   10 B/op  1 allocs/op  3.5 server-cpu-µs/op
BenchmarkHTTP
BenchmarkSolo-2               100    7 ns/op
`

func TestParse(t *testing.T) {
	r, err := Parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	if r.Config["cpu"] != "Test CPU @ 2.00GHz" || r.Config["goos"] != "linux" {
		t.Fatalf("config %v", r.Config)
	}
	if len(r.Samples) != 5 {
		t.Fatalf("%d samples", len(r.Samples))
	}
	s := r.Samples[0]
	if s.Name != "Store/impl=mem/op=renew/listings=25000" || !strings.HasSuffix(s.Pkg, "/bench") || len(s.Values["ns/op"]) != 3 {
		t.Fatalf("first sample %+v", s)
	}
	if st := summarize(s.Values["ns/op"]); st.Median != 1000 || st.Spread < 0.099 || st.Spread > 0.101 || st.N != 3 {
		t.Fatalf("summary %+v", st)
	}
	h := r.Samples[3]
	if h.Name != "HTTP/browse100" || h.Values["server-cpu-µs/op"][0] != 3.5 || h.Units[len(h.Units)-1] != "server-cpu-µs/op" {
		t.Fatalf("custom metric sample %+v", h)
	}
	if summarize([]float64{1, 3}).Median != 2 || summarize(nil).N != 0 {
		t.Fatal("even-length or empty median wrong")
	}
}

func TestParseErrors(t *testing.T) {
	f := func(in string) {
		t.Helper()
		_, err := Parse(strings.NewReader(in))
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 {
			t.Fatalf("Parse(%q) = %v, want a ParseError on line 2", in, err)
		}
	}
	f("goos: linux\nBenchmarkX-2 100 12 ns/op 7\n")
	f("goos: linux\nBenchmarkX-2 100 twelve ns/op\n")
}

func TestFindBaseline(t *testing.T) {
	r, err := Parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]*Sample{}
	for _, s := range r.Samples {
		by[s.Name] = s
	}
	f := func(name, want string) {
		t.Helper()
		b := FindBaseline(by[name], r.Samples)
		got := ""
		if b != nil {
			got = b.Name
		}
		if got != want {
			t.Fatalf("baseline of %s = %q, want %q", name, got, want)
		}
	}
	f("Store/impl=mem/op=renew/listings=25000", "Store/impl=ref/op=renew/listings=25000")
	f("Store/impl=ref/op=renew/listings=25000", "") // a baseline has none
	f("HTTP/browse100", "HTTP/bare")
	f("Solo", "")
	udp := []*Sample{{Name: "UDP/echo-20B"}, {Name: "UDP/echo-120B"}, {Name: "UDP/presence-120B"}, {Name: "UDP/plain-binding-20B"},
		{Name: "HTTP/bare_page"}, {Name: "HTTP/browse_page"}}
	g := func(s *Sample, want string) {
		t.Helper()
		got := ""
		if b := FindBaseline(s, udp); b != nil {
			got = b.Name
		}
		if got != want {
			t.Fatalf("baseline of %s = %q, want %q", s.Name, got, want)
		}
	}
	g(udp[2], "UDP/echo-120B")
	g(udp[3], "UDP/echo-20B")
	g(udp[5], "HTTP/bare_page")
	g(udp[4], "")
	// Keys must match: op=ref is no baseline for impl=mem.
	odd := &Sample{Name: "Store/op=ref/op=renew/listings=25000"}
	if FindBaseline(by["Store/impl=mem/op=renew/listings=25000"], []*Sample{odd}) != nil {
		t.Fatal("paired across different keys")
	}
}

// writer returns a function that writes a file, making its directory.
func writer(t *testing.T) func(path, s string) {
	return func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRender(t *testing.T) {
	in, docs := t.TempDir(), t.TempDir()
	write := writer(t)
	write(filepath.Join(in, "store.txt"), sampleOutput)
	write(filepath.Join(in, "store.benchstat.txt"), "benchstat says hi\n")
	write(filepath.Join(docs, "store.md"), "# Store\n\nProse before.\n\n"+marker+"\n\nProse after.\n```\n# not a heading\n```\n")
	write(filepath.Join(docs, "http.md"), "# HTTP\n\nNo marker here.\n")
	write(filepath.Join(in, "http.txt"), "pkg: x/httpapi\nBenchmarkH/bare-2 10 100 ns/op\nBenchmarkH/bare_page-2 10 400 ns/op\nBenchmarkH/browse-2 10 800 ns/op\n")
	write(filepath.Join(in, "load", "result.json"), `{"mode":"shed","seconds":30,"ceilings":{"listings":25000,"presence":25000,"attempts":10000},
		"fill":{"listings":{"admitted":25000,"seconds":1.2},"presence":{"admitted":25000,"seconds":0.3},"attempts":{"admitted":10000,"seconds":0.5},"total_seconds":2,"server_rss_mib":70.5},
		"shed":{"overload_factor":2,"offered_over_ceiling":35000,"typed_shed":35000,"typed_shed_pct":100,"shed_p99_ms":1.5,"shed_answer_p99_ms":0.75},
		"checks":[{"name":"shed.p99","ok":false,"detail":"too slow"}],"passed":false}`)
	var b strings.Builder
	if err := Render(&b, in, docs, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"# Benchmarks", "**510×**", "`bench Store/impl=ref/op=renew/listings=25000`", "Prose before.", "Prose after.", "benchstat says hi",
		"No marker here.", "_No benchmark results for this area in this run._", "70.5 MiB",
		"35000 (100.000 %)", "**0.750**", "FAILED `shed.p99`: too slow", "# not a heading", "coturn comparison not measured", "_No UDP rate result in this run._",
	} {
		if !strings.Contains(page, want) {
			t.Fatalf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Index(page, "Prose before.") > strings.Index(page, "#### Measured") || strings.Index(page, "#### Measured") > strings.Index(page, "Prose after.") {
		t.Fatal("tables not placed at the marker")
	}
	if strings.Contains(page, "\n## Store\n") || strings.Contains(page, "\n# Store\n") {
		t.Fatal("area title not demoted or not dropped")
	}
	// With the comparison results the ratio is computed.
	write(filepath.Join(in, "compare", "ours", "result.json"), `{"mode":"udprate","udp_rate":{"kind":"presence","sockets":4,"window_per_socket":256,"answered_per_s":150000,"server_cpu_us_per_answer":3}}`)
	write(filepath.Join(in, "compare", "coturn", "result.json"), `{"mode":"udprate","udp_rate":{"kind":"plain","answered_per_s":100000,"server_cpu_us_per_answer":6}}`)
	b.Reset()
	if err := Render(&b, in, docs, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "`x/httpapi H/bare` | 100 ns | **0.12×**") {
		t.Fatalf("rule baseline missing:\n%s", b.String())
	}
	write(filepath.Join(docs, "http.md"), "# HTTP\n\n<!-- baseline: H/browse = H/bare_page -->\n")
	b.Reset()
	if err := Render(&b, in, docs, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Rate ratio rendezvous ÷ coturn: **1.50**", "`x/httpapi H/bare_page` | 400 ns | **0.50×**", "CPU per answer coturn ÷ rendezvous: **2.00**", "| coturn | plain Binding | 100000 |"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("page lacks %q", want)
		}
	}
	// Bad benchmark output is an error naming the file.
	write(filepath.Join(in, "udp.txt"), "BenchmarkX-2 100 1 ns/op 2\n")
	if err := Render(&b, in, docs, time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "udp.txt") {
		t.Fatalf("bad udp.txt: %v", err)
	}
}
