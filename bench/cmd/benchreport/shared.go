package main

import (
	"fmt"
	"io"
	"path/filepath"
)

// The shared-state suite: the Redis store's transitions at the full fill
// (BenchmarkRedisStore in ./bench/, with the Redis server's CPU per call)
// and one instance's authenticated UDP presence rate on each store, held
// against the SHARED-STATE targets.

const (
	sharedStem = "shared-state"

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
func sharedTables(w io.Writer, run *Run, pairs []storePair) {
	fmt.Fprintln(w, "Per transition on the Redis store at 25,000 listings with presence and 10,000 attempts (`BenchmarkRedisStore` in `bench/store_redis_test.go`); medians of the runs:")
	fmt.Fprintln(w)
	bySub := subBenchmarks(run, "RedisStore/op=")
	if len(bySub) == 0 {
		fmt.Fprintln(w, "_No Redis store benchmark results in this run._")
	} else {
		tableHead(w, "lrrrl", "transition", "client time per call", "Redis CPU per call", "Redis CPU per refresh", "target")
		for _, tr := range sharedTransitions {
			s := bySub[tr.op]
			if s == nil {
				fmt.Fprintf(w, "| %s | not measured | | | |\n", tr.label)
				continue
			}
			row := fmt.Sprintf("| %s | %s |", tr.label, callCells(s))
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
	if !measured(w, len(pairs), "UDP presence rate on both stores") {
		return
	}
	fmt.Fprintf(w, "Authenticated UDP presence answered per second by one instance, same generator, the two stores alternating, %d pairs (`rendezvous-load --mode udprate --stun presence --listings 5000`):\n\n", len(pairs))
	tableHead(w, "lrrrrrr", "run", "memory answered/s", "redis answered/s", "ratio redis ÷ memory", "memory CPU/answer", "redis CPU/answer", "lost (memory, redis)")
	var ratios []float64
	for _, p := range pairs {
		m, r := p.mem.UDPRate, p.redis.UDPRate
		ratio := 0.0
		if m.PerSecond > 0 {
			ratio = r.PerSecond / m.PerSecond
			ratios = append(ratios, ratio)
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %s | %.2f µs | %.2f µs | %d, %d |\n", p.run, m.PerSecond, r.PerSecond, fmtRatio(ratio), m.CPUPerAnswer, r.CPUPerAnswer, m.Lost, r.Lost)
	}
	if len(ratios) > 0 {
		med, lo, hi := medianRange(ratios)
		fmt.Fprintf(w, "\nRate ratio redis ÷ memory: **%s**, median of %d pairs (range %s–%s; target ≥ %.1f in every pair: %s).\n",
			fmtRatio(med), len(ratios), fmtRatio(lo), fmtRatio(hi), targetRateRatio, verdict(lo >= targetRateRatio))
	}
}

// storePair is one run's memory and redis udprate results.
type storePair struct {
	run        string
	mem, redis *loadResult
}

// readPairs reads udprate-memory-r<N> and udprate-redis-r<N> for N = 1, 2, ...
func readPairs(in string) []storePair {
	var pairs []storePair
	for _, n := range runNumbers(in, "udprate-memory-r") {
		m, _ := readLoad(filepath.Join(in, fmt.Sprintf("udprate-memory-r%d", n), "result.json"))
		r, _ := readLoad(filepath.Join(in, fmt.Sprintf("udprate-redis-r%d", n), "result.json"))
		if m != nil && r != nil && m.UDPRate != nil && r.UDPRate != nil {
			pairs = append(pairs, storePair{run: fmt.Sprint(n), mem: m, redis: r})
		}
	}
	return pairs
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "**not met**"
}
