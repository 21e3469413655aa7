package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
