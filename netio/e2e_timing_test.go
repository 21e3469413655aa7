package netio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// runLoadClient runs the load client process and returns its report.
func runLoadClient(b *testing.B, s loadSpec) loadResult {
	b.Helper()
	spec, _ := json.Marshal(s)
	path := b.TempDir() + "/load.json"
	if err := os.WriteFile(path, spec, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLoadClient$", "-test.count=1")
	cmd.Env = append(os.Environ(), loadClientEnv+"="+path)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("load client: %v: %s", err, errb.String())
	}
	var r loadResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		b.Fatalf("load client output %q: %v", out.String(), err)
	}
	return r
}

// presenceFixture is a mediator with benchHosts listings whose presence the
// load client refreshes.
func presenceFixture(b *testing.B) (*fixture, []engine.UUID) {
	f := newFixture(b, Config{Sockets: 2})
	hs := make([]engine.UUID, benchHosts)
	for i := range hs {
		v, _ := f.listing()
		hs[i] = v.Presence.UUID
	}
	return f, hs
}

// BenchmarkUDPEndToEnd compares, in one run, a raw batched UDP echo (the
// physical limit on this machine, same datagram sizes, same socket path) with
// our plain Binding and our authenticated presence refresh, driven from a
// separate load-client process. ns/op is wall time per answer; answers/s is
// the rate; server-cpu-ns/answer is this process's CPU time per answer (the
// figure that carries over to other hardware, ARCHITECTURE.md).
func BenchmarkUDPEndToEnd(b *testing.B) {
	const flows, window = 2, 64
	measure := func(b *testing.B, answered, batches func() int64, s loadSpec) {
		s.Count, s.Flows, s.Window = b.N, flows, window
		a0, b0, cpu0, t0 := answered(), batches(), processCPU(), time.Now()
		r := runLoadClient(b, s)
		wall, cpu, n := time.Since(t0), processCPU()-cpu0, answered()-a0
		if n == 0 {
			b.Fatal("nothing answered")
		}
		b.ReportMetric(float64(n)/wall.Seconds(), "answers/s")
		b.ReportMetric(float64(cpu)/float64(n), "server-cpu-ns/answer")
		b.ReportMetric(float64(n)/float64(batches()-b0), "datagrams/batch")
		if r.Answered > 0 && s.Mode != "echo" {
			b.ReportMetric(100*float64(r.OK)/float64(r.Answered), "success-%")
		}
	}
	for _, size := range []int{20, 120} {
		b.Run("echo-"+map[int]string{20: "20B", 120: "120B"}[size], func(b *testing.B) {
			e := startEcho(b, 2)
			measure(b, e.answered.Load, e.reads.Load, loadSpec{Target: e.addr.String(), Mode: "echo", Size: size})
		})
	}
	b.Run("plain-binding-20B", func(b *testing.B) {
		f := newFixture(b, Config{Sockets: 2})
		measure(b, f.answered, f.batches, loadSpec{Target: f.addr.String(), Mode: "binding"})
	})
	b.Run("presence-120B", func(b *testing.B) {
		f, hs := presenceFixture(b)
		measure(b, f.answered, f.batches,
			loadSpec{Target: f.addr.String(), Mode: "presence", Key: testKey, Handles: hs})
	})
}

// BenchmarkForgedFlood: benchHosts hosts refresh presence while forged
// refreshes (valid form, wrong key, another source address) arrive at ten
// times the legitimate rate. legit-ok-% is the share of legitimate refreshes
// answered with success; forged-answered is how many 401s the rate limiter let
// out. Each sub-benchmark runs one 3-second flood whatever b.N is (run it
// with -benchtime 1x); ns/op is meaningless here.
func BenchmarkForgedFlood(b *testing.B) {
	for _, rate := range []int{2000, 5000} {
		b.Run(fmt.Sprintf("legit-%d/s", rate), func(b *testing.B) {
			f, hs := presenceFixture(b)
			cpu0 := processCPU()
			in0 := f.med.met.in.Get()
			r := runLoadClient(b, loadSpec{Target: f.addr.String(), Mode: "flood", Key: testKey, Handles: hs,
				Rate: rate, Duration: 3 * time.Second})
			cpu, in := processCPU()-cpu0, f.med.met.in.Get()-in0
			if r.LegitSent == 0 || in == 0 {
				b.Fatal("no traffic")
			}
			b.ReportMetric(100*float64(r.LegitOK)/float64(r.LegitSent), "legit-ok-%")
			b.ReportMetric(float64(r.LegitSent), "legit-sent")
			b.ReportMetric(float64(r.ForgedSent), "forged-sent")
			b.ReportMetric(float64(r.ForgedAnsw), "forged-answered")
			b.ReportMetric(float64(f.med.met.drops[dropRateLimited].Get()), "forged-dropped")
			b.ReportMetric(float64(cpu)/float64(in), "server-cpu-ns/datagram")
		})
	}
}

func (f *fixture) answered() int64 { return int64(f.med.met.out.Get()) }
func (f *fixture) batches() int64  { return int64(f.med.met.batches.Get()) }
