package main

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Size of the linearizability run: slots × workers × opsPerWorker
// operations (plus the creation race and one observation per slot),
// stopped early at runBound. Big enough for every kind of race to happen
// many times, small enough for porcupine to check in well under a second.
const (
	linSlots        = 6
	linWorkers      = 4
	linCreators     = 3
	linOpsPerWorker = 40
	linRunBound     = 8 * time.Second
	linCheckTimeout = 20 * time.Second
)

// recorder collects the history; timestamps are monotonic nanoseconds since
// the run began.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
	errs  []error
}

func (r *recorder) now() int64 { return int64(time.Since(r.start)) }

// errUnknownOutcome: the operation went to an instance killed before it
// answered.
var errUnknownOutcome = errors.New("no answer: the instance was killed")

// unknownIf is err marked errUnknownOutcome when the request went to the
// killed instance.
func unknownIf(victim bool, err error) error {
	if victim {
		return fmt.Errorf("%w: %w", errUnknownOutcome, err)
	}
	return err
}

// run performs one operation and records it. An operation cut short by the
// fault is recorded with an Unknown output and no return yet (endUnknown
// gives it one); any other that got no answer (a transport error) fails
// the test instead.
func (r *recorder) run(client int, in linInput, f func() (linOutput, error)) linOutput {
	call := r.now()
	out, err := f()
	ret := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if errors.Is(err, errUnknownOutcome) {
		r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: linOutput{Unknown: true}, Return: -1})
		return out
	}
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("slot %d %v: %w", in.Slot, in.Kind, err))
		return out
	}
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	return out
}

// endUnknown gives every operation without an answer the end of the
// history as its return time, as porcupine wants them: it may then take
// effect anywhere after its call, or (linearized last) not at all.
func (r *recorder) endUnknown() {
	end := r.now() + 1
	for i := range r.ops {
		if r.ops[i].Return < 0 {
			r.ops[i].Return = end
		}
	}
}

// TestLinearizability drives the real binary with concurrent HTTP and UDP
// operations on a few listings and checks with porcupine that the history
// is linearizable against the sequential model in
// linearizability_model_test.go. It then shows the check can fail: the
// same history with one injected extra introduction is illegal.
func TestLinearizability(t *testing.T) { eachStore(t, linearizability) }

// linearizability runs the check on a server started with storeArgs.
func linearizability(t *testing.T, storeArgs []string) {
	p := startProc(t, append(linServerArgs(), storeArgs...)...)
	rec := runLinHistory(t, p, nil)

	checkLinearizable(t, linModel, rec.ops, porcupine.Ok)
	requireCoverage(t, rec.ops)

	// The check can fail: one more INTRODUCE than a role's successful
	// binds can ever cause is a second consumption of the introduction.
	checkLinearizable(t, linModel, injectDoubleIntroduction(t, rec.ops), porcupine.Illegal)

	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit status %d; log:\n%s", code, p.stderr.String())
	}
}

// linServerArgs are the server flags of a linearizability run.
func linServerArgs() []string {
	// Lifetimes far above the run's length (the model has no expiry);
	// ceilings and quotas far above what it uses (the model has none).
	return []string{"--lease-ttl", "60s", "--presence-ttl", "20s", "--attempt-ttl", "30s", "--idempotency-ttl", "10m",
		"--drain-window", "1s", // attempts left unbound end the drain at its window
		// Host binds of deleted attempts get unsigned 401s, which are
		// rate-limited per source address (all of the run's sockets share
		// one): the limiter is not part of the model, so it must not drop.
		"--udp-error-rate", "1000000", "--udp-error-burst", "1048576"}
}

// runLinHistory records a history of concurrent operations on p, or, with
// d, on d's instances (p is the one that survives d's fault, injected
// mid-history).
func runLinHistory(t *testing.T, p *proc, d *linDeployment) *recorder {
	t.Helper()
	client := &http.Client{Timeout: hangGuard, Transport: &http.Transport{MaxIdleConnsPerHost: linSlots * (linWorkers + linCreators)}}
	defer client.CloseIdleConnections()

	seed := uint64(time.Now().UnixNano())
	t.Logf("schedule seed %d", seed)
	rec := &recorder{start: time.Now()}
	deadline := rec.start.Add(linRunBound)
	slots := make([]*linSlot, linSlots)
	for k := range slots {
		s := &linSlot{idx: k, p: p, d: d, client: client, key: fmt.Sprintf("lin-%d", k)}
		defer s.closeSockets()
		if err := s.openSockets(); err != nil {
			t.Fatal(err)
		}
		slots[k] = s
	}

	var wg sync.WaitGroup
	for _, s := range slots {
		// The creation race: several goroutines send the same key at once;
		// in odd slots one of them sends a different body.
		for c := range linCreators {
			body := 0
			if s.idx%2 == 1 && c == linCreators-1 {
				body = 1
			}
			wg.Go(func() {
				in := linInput{Slot: s.idx, Kind: opCreate, Body: body}
				rec.run(clientID(s.idx, c), in, func() (linOutput, error) { return s.create(in) })
			})
		}
	}
	wg.Wait()
	for _, s := range slots {
		if !s.known {
			t.Fatalf("slot %d: no creation succeeded", s.idx)
		}
		for w := range linWorkers {
			rng := rand.New(rand.NewPCG(seed, uint64(s.idx*linWorkers+w)))
			wg.Go(func() { s.work(rec, rng, clientID(s.idx, linCreators+w), w, deadline) })
		}
	}
	if d != nil {
		wg.Go(func() { d.injectFault(t, rec, deadline) })
	}
	wg.Wait()
	if d != nil {
		// Datagrams forwarded between instances travel through Redis, not
		// the sockets' path: give them time to arrive.
		time.Sleep(300 * time.Millisecond)
	}
	// Quiescence: every INTRODUCE sent has been read once each socket's
	// plain Binding is answered; the observation then records the counts.
	for _, s := range slots {
		call := rec.now()
		for _, sock := range append(s.host[:], s.clients[:]...) {
			if err := sock.barrier(); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		out := linOutput{Code: 200, Intro: s.intro}
		s.mu.Unlock()
		rec.ops = append(rec.ops, porcupine.Operation{ClientId: clientID(s.idx, linCreators+linWorkers),
			Input: linInput{Slot: s.idx, Kind: opObserve, Lossy: d != nil}, Call: call, Output: out, Return: rec.now()})
		if err := s.sockErr(); err != nil {
			t.Errorf("slot %d: %v", s.idx, err)
		}
	}
	rec.endUnknown()
	for _, err := range rec.errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	select {
	case <-p.exited:
		t.Fatalf("the server stopped during the run; log:\n%s", p.stderr.String())
	default:
	}
	return rec
}

func clientID(slot, goroutine int) int {
	return slot*(linCreators+linWorkers+1) + goroutine
}

// work is one worker goroutine of a slot: linOpsPerWorker operations of
// random kinds on what the slot knows so far. In every third slot worker 0
// deletes the listing half-way, racing the others.
func (s *linSlot) work(rec *recorder, rng *rand.Rand, client, w int, deadline time.Time) {
	for i := 0; i < linOpsPerWorker && time.Now().Before(deadline); i++ {
		in := linInput{Slot: s.idx}
		var f func() (linOutput, error)
		switch x := rng.IntN(100); {
		case s.idx%3 == 2 && w == 0 && i == linOpsPerWorker/2:
			in.Kind, f = opDelete, s.remove
		case x < 18:
			in.Kind = opPresence
			s.mu.Lock()
			if rng.IntN(5) == 0 && s.seq > 0 {
				in.Seq = s.seq - uint64(rng.IntN(int(min(s.seq, 3)))) // a replayed old sequence
			} else {
				s.seq++
				in.Seq = s.seq
			}
			s.mu.Unlock()
			f = func() (linOutput, error) { return s.refresh(in) }
		case x < 28:
			in.Kind, in.Players = opRenew, rng.IntN(10)-1
			s.mu.Lock()
			in.Expect = s.version
			s.mu.Unlock()
			if in.Expect == 0 {
				in.Expect = 1
			}
			if rng.IntN(4) == 0 && in.Expect > 1 {
				in.Expect-- // a stale expectation (0 would be a 400)
			}
			f = func() (linOutput, error) { return s.renew(in) }
		case x < 36:
			in.Kind, f = opGet, s.get
		case x < 40:
			in.Kind, f = opBrowse, s.browse
		case x < 55:
			in.Kind, in.Key = opJoin, rng.IntN(linJoinKeys)
			f = func() (linOutput, error) { return s.join(in) }
		case x < 95:
			in.Kind, in.Key, in.Role = opBind, rng.IntN(linJoinKeys), rng.IntN(2)
			if rng.IntN(5) == 0 {
				in.Sock = 1
			}
			s.mu.Lock()
			known := s.attempts[in.Key].known
			s.mu.Unlock()
			if !known {
				continue
			}
			f = func() (linOutput, error) { return s.bind(in) }
		default:
			in.Kind = opCreate
			f = func() (linOutput, error) { return s.create(in) }
		}
		rec.run(client, in, f)
	}
}

// checkLinearizable runs porcupine and fails unless it reports want; an
// Unknown result (the checker's timeout) always fails. On an unexpected
// Illegal it writes porcupine's visualisation for the failing partition.
func checkLinearizable(t *testing.T, m porcupine.Model, ops []porcupine.Operation, want porcupine.CheckResult) {
	t.Helper()
	t0 := time.Now()
	res, info := porcupine.CheckOperationsVerbose(m, ops, linCheckTimeout)
	t.Logf("porcupine: %s over %d operations in %v", res, len(ops), time.Since(t0).Round(time.Millisecond))
	if res == want {
		return
	}
	if res == porcupine.Illegal && want == porcupine.Ok {
		logIllegalSlot(t, m, ops)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("rendezvous-linearizability-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(m, info, path); err == nil {
			t.Logf("porcupine's visualisation: %s", path)
		}
	}
	t.Fatalf("porcupine: %s over %d operations, want %s", res, len(ops), want)
}

// requireCoverage fails when the run did not exercise the races the check
// is about, so a quiet run cannot pass vacuously.
func requireCoverage(t *testing.T, ops []porcupine.Operation) {
	t.Helper()
	seen := map[string]int{}
	intros := 0
	var span int64
	for _, op := range ops {
		span = max(span, op.Return)
		in, out := op.Input.(linInput), op.Output.(linOutput)
		seen[fmt.Sprintf("%v %d", in.Kind, out.Code)]++
		if in.Kind == opObserve {
			for _, c := range flatten(out.Intro) {
				intros += int(c)
			}
		}
	}
	t.Logf("%d operations over %v; outcomes: %v; INTRODUCEs: %d", len(ops), time.Duration(span).Round(time.Millisecond), seen, intros)
	for _, want := range []string{"create 201", "create 200", "create 409", "renew 200", "renew 409",
		"presence 200", "presence 409", "join 201", "join 200", "bind 200", "bind 409", "get 200", "browse 200", "delete 204"} {
		if seen[want] == 0 {
			t.Errorf("the run never saw %q", want)
		}
	}
	if intros == 0 {
		t.Errorf("the run introduced nobody")
	}
}

func flatten(c introCounts) []uint8 {
	var out []uint8
	for _, a := range c {
		for _, b := range a {
			for _, d := range b {
				out = append(out, d[:]...)
			}
		}
	}
	return out
}

// injectDoubleIntroduction returns a copy of ops in which one observed
// INTRODUCE count is raised above what any order of the recorded binds can
// explain: a role's socket gets at most one INTRODUCE per successful bind
// it sent plus the one pushed at consumption.
func injectDoubleIntroduction(t *testing.T, ops []porcupine.Operation) []porcupine.Operation {
	t.Helper()
	out := append([]porcupine.Operation(nil), ops...)
	for i, op := range out {
		in, o := op.Input.(linInput), op.Output.(linOutput)
		if in.Kind != opObserve {
			continue
		}
		for k := range o.Intro {
			for role := range o.Intro[k] {
				for sock := range o.Intro[k][role] {
					for peer, c := range o.Intro[k][role][sock] {
						if c == 0 || peer == linSocks {
							continue
						}
						binds := 0
						for _, b := range ops {
							bi, bo := b.Input.(linInput), b.Output.(linOutput)
							if bi.Slot == in.Slot && bi.Kind == opBind && bi.Key == k && bi.Role == role && bi.Sock == sock && bo.Code == 200 {
								binds++
							}
						}
						o.Intro[k][role][sock][peer] = uint8(binds + 2)
						out[i].Output = o
						return out
					}
				}
			}
		}
	}
	t.Fatalf("no INTRODUCE to inject a second one after")
	return nil
}

// logIllegalSlot logs the operations of the first slot whose own history
// is illegal, in call order, so a failure can be read in the test log.
func logIllegalSlot(t *testing.T, m porcupine.Model, ops []porcupine.Operation) {
	t.Helper()
	for _, part := range m.Partition(ops) {
		if porcupine.CheckOperationsTimeout(m, part, linCheckTimeout) != porcupine.Illegal {
			continue
		}
		sorted := append([]porcupine.Operation(nil), part...)
		slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		for _, op := range sorted {
			t.Logf("[%d, %d] client %d: %s", op.Call/1000, op.Return/1000, op.ClientId, m.DescribeOperation(op.Input, op.Output))
		}
		return
	}
}
