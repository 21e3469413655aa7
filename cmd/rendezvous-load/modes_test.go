package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/httpapi"
)

// readJSON reads the JSON file at path into a new T.
func readJSON[T any](t *testing.T, path string) *T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := new(T)
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
	return v
}

// readResult reads the result.json a run wrote into out.
func readResult(t *testing.T, out string) *Result {
	t.Helper()
	return readJSON[Result](t, filepath.Join(out, "result.json"))
}

// phaseOf returns the named phase's table, failing the test without it.
func phaseOf(t *testing.T, res *Result, name string) map[string]KindSummary {
	t.Helper()
	for _, p := range res.Phases {
		if p.Name == name {
			got := map[string]KindSummary{}
			for _, k := range p.Kinds {
				got[k.Kind] = k
			}
			return got
		}
	}
	t.Fatalf("no phase %s in the result (phases %+v)", name, res.Timeline)
	return nil
}

// listingsUsed reads the listings pool's use with the tokens file's operator.
func listingsUsed(t *testing.T, httpAddr, tokens string) int {
	t.Helper()
	tok := readJSON[Tokens](t, tokens)
	op, err := client.NewAPI("http://"+httpAddr, tok.Operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The server reads its figures from the store at most once a second:
	// after a second they include everything done before the call.
	time.Sleep(httpapi.DefaultStoreStatsMaxAge + 100*time.Millisecond)
	st, err := op.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Pools["listings"].Used
}

// serverWithPrincipals builds both binaries, writes principals for 5
// publishers and 2 clients and starts the server.
func serverWithPrincipals(t *testing.T) (load, httpAddr, tokens, pid string) {
	t.Helper()
	dir := t.TempDir()
	server := buildBinary(t, "./cmd/rendezvous")
	load = buildBinary(t, "./cmd/rendezvous-load")
	principals := filepath.Join(dir, "principals.json")
	tokens = filepath.Join(dir, "tokens.json")
	if b, err := exec.Command(load, "principals", "--publishers", "5", "--clients", "2",
		"--principals-out", principals, "--tokens-out", tokens).CombinedOutput(); err != nil {
		t.Fatalf("principals: %v\n%s", err, b)
	}
	srv, httpAddr := startServer(t, server, "--principals", principals, "--drain-window", "1s")
	return load, httpAddr, tokens, strconv.Itoa(srv.Cmd.Process.Pid)
}

// TestLoadAndUDPRateModes runs load mode against the real server (with
// joins, each completing both binds and the introduction; with UDP kinds
// only; with the CPU steps) and udprate in both flavours. Rates are small;
// only outcomes are asserted. Every run removes the listings it created.
func TestLoadAndUDPRateModes(t *testing.T) {
	load, httpAddr, tokens, pid := serverWithPrincipals(t)
	dir := t.TempDir()
	runLoad := func(out string, args ...string) (*Result, string) {
		t.Helper()
		b, err := exec.Command(load, append(args, "--out", out, "--server-pid", pid, "--timeout", "20s")...).CombinedOutput()
		if err != nil {
			t.Fatalf("rendezvous-load %v: %v\n%s", args, err, tail(string(b), 40))
		}
		if n := listingsUsed(t, httpAddr, tokens); n != 0 {
			t.Fatalf("rendezvous-load %v left %d listings on the server\n%s", args, n, tail(string(b), 20))
		}
		return readResult(t, out), string(b)
	}

	res, _ := runLoad(filepath.Join(dir, "load"), "--mode", "load", "--http", httpAddr, "--tokens", tokens,
		"--listings", "200", "--duration", "3s", "--ramp", "1s", "--rate", "browse=50,get=50,join=40,create=5,delete=2,plain=20")
	if !res.Passed || res.Fill.Presence.Admitted != 200 {
		t.Fatalf("load mode: passed %v, presence %d, checks %+v", res.Passed, res.Fill.Presence.Admitted, res.Checks)
	}
	got := phaseOf(t, res, "load")
	for _, k := range []string{"browse", "get", "join", "create", "delete", "bind", "presence", "renew", "plain"} {
		if got[k].OK == 0 || got[k].Errors != 0 {
			t.Fatalf("kind %s in the load phase: %+v", k, got[k])
		}
	}
	if got["bind"].OK != 2*got["join"].OK {
		t.Fatalf("%d binds for %d joins, want two each", got["bind"].OK, got["join"].OK)
	}
	if c := res.Cleanup; c == nil || c.Owned != 200+int(got["create"].OK-got["delete"].OK) || c.Deleted+c.AlreadyGone != c.Owned || c.Failed != 0 {
		t.Fatalf("cleanup after load mode: %+v (created %d, deleted %d)", res.Cleanup, got["create"].OK, got["delete"].OK)
	}

	// UDP kinds alone: the load phase lasts its duration and carries them,
	// and the introductions check, with no bind to check, says so.
	res, out := runLoad(filepath.Join(dir, "udponly"), "--mode", "load", "--http", httpAddr, "--tokens", tokens,
		"--listings", "50", "--duration", "3s", "--rate", "presence=200,plain=50", "--max-error-rate", "0.01")
	got = phaseOf(t, res, "load")
	var loadSecs float64
	for _, p := range res.Phases {
		if p.Name == "load" {
			loadSecs = p.Seconds
		}
	}
	if loadSecs < 3 || got["presence"].OK < 300 || got["plain"].OK < 100 || !res.Passed {
		t.Fatalf("UDP-only load phase: %.1fs, presence %+v, plain %+v, checks %+v", loadSecs, got["presence"], got["plain"], res.Checks)
	}
	var skipped bool
	for _, c := range res.Checks {
		if c.Name == "load.introductions" {
			skipped = c.Skipped && c.Mark() == "SKIP"
		}
	}
	if !skipped || !strings.Contains(out, "SKIP load.introductions") || !strings.Contains(res.Verdict, "1 skipped") ||
		strings.Contains(out, "PASS load.introductions") {
		t.Fatalf("introductions with no bind: verdict %q, checks %+v", res.Verdict, res.Checks)
	}

	// CPU steps: a baseline, then each kind alone at half and full rate,
	// each with the server's CPU per answer.
	res, out = runLoad(filepath.Join(dir, "steps"), "--mode", "load", "--http", httpAddr, "--tokens", tokens,
		"--listings", "50", "--duration", "1s", "--rate", "browse=40,presence=100", "--cpu-steps", "2", "--step-duration", "1s")
	want := []struct {
		kind    string
		offered float64
	}{{"baseline", 0}, {"browse", 20}, {"browse", 40}, {"presence", 50}, {"presence", 100}}
	if len(res.CPUSteps) != len(want) || !strings.Contains(out, "µs/answer") {
		t.Fatalf("CPU steps %+v\n%s", res.CPUSteps, tail(out, 20))
	}
	for i, w := range want {
		s := res.CPUSteps[i]
		if s.Kind != w.kind || s.OfferedPerS != w.offered || (i > 0 && (s.Answers == 0 || s.Seconds < 1)) {
			t.Fatalf("CPU step %d: %+v, want %s at %v/s", i, s, w.kind, w.offered)
		}
		if i > 0 && s.CPUSeconds > 0 && s.MicrosPerAns != s.CPUSeconds*1e6/float64(s.Answers) {
			t.Fatalf("CPU step %d: %.1f µs per answer from %.3fs over %d answers", i, s.MicrosPerAns, s.CPUSeconds, s.Answers)
		}
	}

	// The authenticated presence rate and the plain Binding rate.
	res, _ = runLoad(filepath.Join(dir, "presence"), "--mode", "udprate", "--stun", "presence", "--listings", "200",
		"--http", httpAddr, "--tokens", tokens, "--duration", "1s", "--window", "32")
	if u := res.UDPRate; u == nil || u.OK == 0 || u.OK != u.Answered {
		t.Fatalf("udprate presence: %+v", res.UDPRate)
	}
	// The fill's total is the setup phase's: it ends before the measured
	// phase starts (both read from the run's start, so this is an order of
	// events, not a speed).
	measured := -1.0
	for _, p := range res.Timeline {
		if p.Name == "udprate" {
			measured = p.Start
		}
	}
	if res.Fill == nil || res.Fill.TotalSeconds <= 0 || res.Fill.TotalSeconds > measured {
		t.Fatalf("udprate presence: fill total %+v, measured phase starts at %.3fs", res.Fill, measured)
	}
	// Mediator address from the first rate run (the server advertises it).
	res, _ = runLoad(filepath.Join(dir, "plain"), "--mode", "udprate", "--stun", "plain", "--mediator", res.Mediator,
		"--duration", "1s", "--window", "32")
	if u := res.UDPRate; u == nil || u.OK == 0 || u.OK != u.Answered || u.Kind != "plain" {
		t.Fatalf("udprate plain: %+v", res.UDPRate)
	}
}

// Ctrl-C in the middle of the load phase ends the run, and the listings it
// created are deleted before it exits.
func TestInterruptCleansUp(t *testing.T) {
	load, httpAddr, tokens, pid := serverWithPrincipals(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(load, "--mode", "load", "--http", httpAddr, "--tokens", tokens, "--listings", "300",
		"--duration", "10m", "--rate", "browse=20,create=20", "--server-pid", pid, "--out", out, "--timeout", "20s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
		done <- cmd.Wait()
	}()
	var seen []string
	deadline := time.After(2 * time.Minute)
	for phase := ""; phase != "phase load"; {
		select {
		case phase = <-lines:
			seen = append(seen, phase)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("the load phase did not start:\n%s", strings.Join(seen, "\n"))
		}
	}
	time.Sleep(1500 * time.Millisecond) // some creates of the load phase
	if n := listingsUsed(t, httpAddr, tokens); n <= 300 {
		t.Fatalf("%d listings during the load phase, want the 300 held and some created", n)
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("rendezvous-load did not exit after SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitError || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("after SIGINT: %v, stderr %q", err, stderr.String())
	}
	if n := listingsUsed(t, httpAddr, tokens); n != 0 {
		t.Fatalf("%d listings left on the server after the interrupted run", n)
	}
	res := readResult(t, out)
	if c := res.Cleanup; c == nil || c.Owned <= 300 || c.Failed != 0 || res.Passed {
		t.Fatalf("interrupted run: passed %v, cleanup %+v", res.Passed, res.Cleanup)
	}
}
