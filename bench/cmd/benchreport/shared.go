package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The shared-state suite: the Redis store's transitions at the full fill
// (BenchmarkRedisStore in ./bench/, with the Redis server's CPU per call)
// and one instance's authenticated UDP presence rate on each store, held
// against the SHARED-STATE targets.

const (
	sharedStem = "shared-state"
	// endMarker closes the generated region of the shared-state document,
	// which benchreport rewrites in place (the other area documents only
	// feed the page).
	endMarker = "<!-- /results -->"

	targetRefreshUS = 2.0 // Redis CPU per batched refresh, µs
	targetRateRatio = 0.5 // Redis store's UDP presence rate ÷ memory store's
)

// sharedTransitions are the sub-benchmarks of BenchmarkRedisStore, in
// table order; targeted marks the one the per-refresh target is held to.
var sharedTransitions = []struct {
	op, label string
	targeted  bool
}{
	{"presence-batch128", "presence refresh, 128 per ApplyBatch (the server's fullest commit on Redis)", true},
	{"presence-batch128-offered", "presence refresh answering a pending offer, 128 per ApplyBatch", false},
	{"renew", "lease renewal", false},
	{"create", "listing creation", false},
	{"join", "join attempt", false},
	{"browse100", "browse page of 100", false},
}

// sharedTables renders the shared-state results.
func sharedTables(w io.Writer, run *Run, mem, redis *loadResult) {
	fmt.Fprintln(w, "Per transition on the Redis store at 25,000 listings with presence and 10,000 attempts (`BenchmarkRedisStore` in `bench/store_redis_test.go`); medians of the runs:")
	fmt.Fprintln(w)
	bySub := map[string]*Sample{}
	for _, s := range run.Samples {
		if sub, ok := strings.CutPrefix(s.Name, "RedisStore/op="); ok {
			bySub[sub] = s
		}
	}
	if len(bySub) == 0 {
		fmt.Fprintln(w, "_No Redis store benchmark results in this run._")
	} else {
		fmt.Fprintln(w, "| transition | client time per call | Redis CPU per call | Redis CPU per refresh | target |")
		fmt.Fprintln(w, "|---|--:|--:|--:|---|")
		for _, tr := range sharedTransitions {
			s := bySub[tr.op]
			if s == nil {
				fmt.Fprintf(w, "| %s | not measured | | | |\n", tr.label)
				continue
			}
			t := summarize(s.Values["ns/op"])
			row := fmt.Sprintf("| %s | %s µs %s | %s µs |", tr.label, fmtVal(t.Median/1e3), fmtSpread(t), fmtVal(summarize(s.Values["redis-us/op"]).Median))
			if per, ok := s.Values["redis-us/refresh"]; ok && tr.targeted {
				v := summarize(per).Median
				fmt.Fprintf(w, "%s **%s µs** | ≤ %.0f µs: %s |\n", row, fmtVal(v), targetRefreshUS, verdict(v <= targetRefreshUS))
			} else if ok {
				fmt.Fprintf(w, "%s %s µs | the offer is pending only until the host's next datagram |\n", row, fmtVal(summarize(per).Median))
			} else {
				fmt.Fprintf(w, "%s | |\n", row)
			}
		}
	}
	fmt.Fprintln(w)
	if mem == nil || redis == nil || mem.UDPRate == nil || redis.UDPRate == nil {
		fmt.Fprintln(w, "_UDP presence rate on both stores not measured in this run._")
		return
	}
	fmt.Fprintln(w, "Authenticated UDP presence answered per second by one instance, same generator, one store after the other (`rendezvous-load --mode udprate --stun presence --listings 5000`):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| store | answered/s | lost | server CPU per answer |")
	fmt.Fprintln(w, "|---|--:|--:|--:|")
	for _, r := range []struct {
		name string
		res  *loadResult
	}{{"memory", mem}, {"redis", redis}} {
		u := r.res.UDPRate
		fmt.Fprintf(w, "| %s | %.0f | %d | %.2f µs |\n", r.name, u.PerSecond, u.Lost, u.CPUPerAnswer)
	}
	if mem.UDPRate.PerSecond > 0 {
		ratio := redis.UDPRate.PerSecond / mem.UDPRate.PerSecond
		fmt.Fprintf(w, "\nRate ratio redis ÷ memory: **%s** (target ≥ %.1f: %s).\n", fmtRatio(ratio), targetRateRatio, verdict(ratio >= targetRateRatio))
	}
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**not met**"
}

// fillResults puts tables in doc at its results marker, replacing what an
// earlier run generated up to the end marker; without a marker the tables
// follow the document.
func fillResults(doc, tables string) string {
	i := strings.Index(doc, marker)
	if i < 0 {
		return strings.TrimRight(doc, "\n") + "\n\n" + marker + "\n" + tables + endMarker + "\n"
	}
	rest := doc[i+len(marker):]
	if j := strings.Index(rest, endMarker); j >= 0 {
		rest = rest[j+len(endMarker):]
	}
	return doc[:i] + marker + "\n" + tables + endMarker + rest
}

// renderShared writes the shared-state tables into the area document
// (docs/benchmarks/shared-state.md, rewritten in place) and the page's
// section.
func renderShared(w io.Writer, in, docs, meta string) error {
	var run Run
	if f, err := os.Open(filepath.Join(in, sharedStem+".txt")); err == nil {
		r, err := Parse(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s.txt: %w", sharedStem, err)
		}
		run = *r
	}
	mem, _ := readLoad(filepath.Join(in, "udprate-memory", "result.json"))
	redis, _ := readLoad(filepath.Join(in, "udprate-redis", "result.json"))
	var t strings.Builder
	fmt.Fprintln(&t)
	if meta != "" {
		fmt.Fprintf(&t, "```\n%s\n```\n\n", meta)
	}
	sharedTables(&t, &run, mem, redis)
	fmt.Fprintln(&t)
	path := filepath.Join(docs, sharedStem+".md")
	doc := fillResults(readDoc(path), t.String())
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	var bs string
	if b, err := os.ReadFile(filepath.Join(in, sharedStem+".benchstat.txt")); err == nil {
		bs = string(b)
	}
	// The page's section: the document's prose with the same tables (and
	// the suite's commands) at the marker, where section places them.
	prose := doc[:strings.Index(doc, marker)+len(marker)] + doc[strings.Index(doc, endMarker)+len(endMarker):]
	section(w, "Shared state: the Redis store against the targets", prose, func(w io.Writer) { io.WriteString(w, t.String()) }, bs)
	return nil
}
