package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The shared-state page's HTTP figures (bench/shared_latency.sh): the
// Redis store's single reads per call, the HTTP latency per kind on each
// store at 1,000 mixed requests/s, and what scrapes cost the Redis server.

const targetP99Ratio = 2.0 // Redis store's HTTP p99 ÷ memory store's, per kind

// sharedReads are the sub-benchmarks of BenchmarkRedisStoreReads.
var sharedReads = []struct{ op, label string }{
	{"get", "listing read (GET /v1/listings/{id})"},
	{"status", "attempt status (GET .../join-attempts/{id})"},
}

// latencyKinds are the latency table's rows; livez reaches no store.
var latencyKinds = []struct{ kind, label string }{
	{"create", "create (POST /v1/listings)"},
	{"renew", "renew (PUT .../lease)"},
	{"join", "join (POST .../join-attempts)"},
	{"get", "get (GET /v1/listings/{id})"},
	{"browse", "browse (GET /v1/listings, 50 a page)"},
	{"livez", "livez: no store call, the generator's and the HTTP stack's floor"},
}

// sharedHTTP renders the three tables after sharedTables'.
func sharedHTTP(w io.Writer, run *Run, in string) {
	readsTable(w, run)
	latencyTable(w, in)
	scrapeTable(w, in)
}

func readsTable(w io.Writer, run *Run) {
	bySub := subBenchmarks(run, "RedisStoreReads/op=")
	if !measured(w, len(bySub), "Single reads on the Redis store") {
		return
	}
	fmt.Fprintln(w, "Single reads on the Redis store at the same fill (`BenchmarkRedisStoreReads` in `bench/store_redis_reads_test.go`), one call of a fixed set of key reads each; medians of the runs:")
	fmt.Fprintln(w)
	tableHead(w, "lrr", "read", "client time per call", "Redis CPU per call")
	for _, rd := range sharedReads {
		cells := "not measured |"
		if s := bySub[rd.op]; s != nil {
			cells = callCells(s)
		}
		fmt.Fprintf(w, "| %s | %s |\n", rd.label, cells)
	}
}

// kindLatency is one kind's figures in a load run's load phase.
type kindLatency struct {
	Kind string  `json:"kind"`
	Sent uint64  `json:"sent"`
	Late uint64  `json:"late"`
	Rate float64 `json:"rate_per_s"`
	P50  float64 `json:"p50_ms"`
	P99  float64 `json:"p99_ms"`
}

// readLatency reads a load run's load-phase kinds by name (nil when the
// run is missing or has no load phase).
func readLatency(path string) map[string]kindLatency {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var r struct {
		Phases []struct {
			Name  string        `json:"name"`
			Kinds []kindLatency `json:"kinds"`
		} `json:"phases"`
	}
	if json.Unmarshal(data, &r) != nil {
		return nil
	}
	for _, p := range r.Phases {
		if p.Name == "load" {
			m := map[string]kindLatency{}
			for _, k := range p.Kinds {
				m[k.Kind] = k
			}
			return m
		}
	}
	return nil
}

func latencyTable(w io.Writer, in string) {
	type pair struct{ mem, redis map[string]kindLatency }
	var pairs []pair
	for _, n := range runNumbers(in, "latency-memory-r") {
		m := readLatency(filepath.Join(in, fmt.Sprintf("latency-memory-r%d", n), "result.json"))
		r := readLatency(filepath.Join(in, fmt.Sprintf("latency-redis-r%d", n), "result.json"))
		if m != nil && r != nil {
			pairs = append(pairs, pair{m, r})
		}
	}
	if !measured(w, len(pairs), "HTTP latency on both stores") {
		return
	}
	fmt.Fprintf(w, "HTTP latency at 1,000 requests/s mixed, open loop (latency from each request's intended start), one instance, the same build and generator, the two stores alternating, %d pairs (`rendezvous-load --mode load --listings 2000 --rate create=150,renew=300,join=150,browse=100,get=300,livez=100`; each join also binds both sides over UDP and is introduced, and the held listings' presence runs besides); medians over the pairs, milliseconds:\n\n", len(pairs))
	tableHead(w, "lrrrrrrr", "kind", "answered/s (memory, redis)", "memory p50", "memory p99", "redis p50", "redis p99", "p99 redis ÷ memory", "not sent on time (memory, redis)")
	worst := 0.0
	for _, k := range latencyKinds {
		var mp50, mp99, rp50, rp99, ratios, mrate, rrate []float64
		var mlate, rlate uint64
		for _, p := range pairs {
			m, mok := p.mem[k.kind]
			r, rok := p.redis[k.kind]
			if !mok || !rok {
				continue
			}
			mp50, mp99, rp50, rp99 = append(mp50, m.P50), append(mp99, m.P99), append(rp50, r.P50), append(rp99, r.P99)
			mrate, rrate = append(mrate, m.Rate), append(rrate, r.Rate)
			mlate, rlate = mlate+m.Late, rlate+r.Late
			if m.P99 > 0 {
				ratios = append(ratios, r.P99/m.P99)
			}
		}
		if len(mp50) == 0 {
			fmt.Fprintf(w, "| %s | not measured | | | | | | |\n", k.label)
			continue
		}
		med := func(v []float64) float64 { m, _, _ := medianRange(v); return m }
		ratio, lo, hi := medianRange(ratios)
		if k.kind != "livez" {
			worst = max(worst, ratio)
		}
		fmt.Fprintf(w, "| %s | %.0f, %.0f | %s | %s | %s | %s | %s (%s–%s) | %d, %d |\n", k.label, med(mrate), med(rrate),
			fmtVal(med(mp50)), fmtVal(med(mp99)), fmtVal(med(rp50)), fmtVal(med(rp99)), fmtRatio(ratio), fmtRatio(lo), fmtRatio(hi), mlate, rlate)
	}
	fmt.Fprintf(w, "\nHighest median p99 ratio redis ÷ memory over the store kinds: **%s** (target ≤ %.0f: %s). Where the livez row's p99 is near the others', the generator and the machine set the tail, not the store.\n",
		fmtRatio(worst), targetP99Ratio, verdict(worst <= targetP99Ratio))
}

// scrapeTable renders $OUT/scrapes-redis.txt (shared_scrapes).
func scrapeTable(w io.Writer, in string) {
	f, err := os.Open(filepath.Join(in, "scrapes-redis.txt"))
	fmt.Fprintln(w)
	if err != nil {
		fmt.Fprintln(w, "_Scrape cost on the Redis store not measured in this run._")
		return
	}
	defer f.Close()
	v := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, s, ok := strings.Cut(sc.Text(), "="); ok {
			v[k], _ = strconv.ParseFloat(s, 64)
		}
	}
	perSecond := func(name string) float64 {
		if v[name+"_seconds"] <= 0 {
			return 0
		}
		return v[name+"_fcalls"] / v[name+"_seconds"]
	}
	fmt.Fprintln(w, "What scrapes cost the Redis server: Redis function calls (`INFO commandstats` around each batch) of one instance on the Redis store, 25 requests at a time (`curl --parallel`); the instance renews its registration besides (the idle row):")
	fmt.Fprintln(w)
	tableHead(w, "lrrrr", "batch", "requests", "seconds", "Redis function calls", "calls/s")
	fmt.Fprintf(w, "| idle (no request) | 0 | %.2f | %.0f | %.1f |\n", v["idle_seconds"], v["idle_fcalls"], perSecond("idle"))
	fmt.Fprintf(w, "| `/metrics` (metrics listener) and `/readyz`, half each | %.0f | %.2f | %.0f | %.1f |\n", v["scrapes"], v["open_seconds"], v["open_fcalls"], perSecond("open"))
	fmt.Fprintf(w, "| `GET /v1/admin/stats` (global operator) | %.0f | %.2f | %.0f | %.1f |\n", v["scrapes"], v["admin_seconds"], v["admin_fcalls"], perSecond("admin"))
	fmt.Fprintln(w, "\nThe store figures are read at most once a second per instance, whatever the rate. The admin stats also check their caller's revocation: the two monitoring reads (these and `/metrics` on the API listener) share that check per operator for as long as they share the figures, so a revocation reaches them within a second and every other route at once.")
}
