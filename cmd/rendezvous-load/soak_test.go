package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// TestSoak is `make soak` for two minutes (make test runs it): the load
// tester starts the real server itself and runs the soak's mixed load
// against it. Every check must pass: resources bounded, no listing lost,
// every answer typed. The figures are logged for the reliability record.
func TestSoak(t *testing.T) {
	dir := t.TempDir()
	server := buildBinary(t, "./cmd/rendezvous")
	load := buildBinary(t, "./cmd/rendezvous-load")
	out := filepath.Join(dir, "out")
	b, err := exec.Command(load, "--mode", "soak", "--server-bin", server, "--duration", "2m", "--listings", "500",
		"--progress", "5s", "--timeout", "20s", "--out", out).CombinedOutput()
	if err != nil {
		t.Fatalf("rendezvous-load --mode soak: %v\n%s", err, tail(string(b), 60))
	}
	res := readResult(t, out)
	s := res.Soak
	if !res.Passed || s == nil || len(s.Samples) < 50 || s.Lost != 0 || s.UntypedHTTP != 0 || s.NotProblem != 0 || s.BadUDP != 0 || s.Created == 0 || s.Deleted == 0 {
		t.Fatalf("soak: passed %v, %+v\n%s", res.Passed, s, tail(string(b), 40))
	}
	got := phaseOf(t, res, "soak")
	// Errors (a datagram lost on a busy machine) are bounded by the run's
	// soak.errors check; every kind must have been answered.
	for _, k := range []string{"create", "delete", "renew", "browse", "get", "join", "presence", "bind"} {
		if got[k].OK == 0 {
			t.Fatalf("kind %s in the soak: %+v", k, got[k])
		}
	}
	var progress int
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, " soak ") && strings.Contains(line, " prs ") {
			progress++
			if n := len([]rune(line)); n > progressWidth {
				t.Fatalf("progress line of %d columns:\n%s", n, line)
			}
		}
	}
	if progress < 20 {
		t.Fatalf("%d progress lines in the soak phase, want one per 5s", progress)
	}
	for _, g := range s.Growth {
		t.Logf("%s: %s", g.Resource, g.Detail())
	}
	t.Logf("answers %v in %d requests; created %d, deleted %d, expected %d, lost %d", s.Answers, s.Requests, s.Created, s.Deleted, s.Expected, s.Lost)
}

// A listing removed behind the soak's back (an operator revokes it) is
// reported lost, and the soak fails.
func TestSoakDetectsLoss(t *testing.T) {
	load, httpAddr, tokens, pid := serverWithPrincipals(t)
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(load, "--mode", "soak", "--http", httpAddr, "--tokens", tokens, "--server-pid", pid,
		"--listings", "50", "--duration", "16s", "--sample-every", "1s", "--rate", "browse=10,get=10", "--out", out, "--timeout", "20s")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "phase soak" {
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()
	tok := readJSON[Tokens](t, tokens)
	cl, err := client.NewAPI("http://"+httpAddr, tok.Clients[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	items, _, err := cl.BrowsePage(context.Background(), client.BrowseQuery{ProtocolVersion: 7, PageSize: 1}, "")
	if err != nil || len(items) != 1 {
		t.Fatalf("browse during the soak: %v, %d items", err, len(items))
	}
	// The operator's revocation (docs/contracts/http.md#operator-routes); the
	// SDK has no call for it.
	req, err := http.NewRequest("DELETE", "http://"+httpAddr+"/v1/admin/listings/"+fmt.Sprint(items[0].ListingID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok.Operator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 {
		t.Fatalf("revoke: status %d", resp.StatusCode)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("the soak with a listing removed exited %v", err)
	}
	res := readResult(t, out)
	for _, c := range res.Checks {
		if c.Name == "soak.lost" && (c.OK || res.Soak.Lost != 1) {
			t.Fatalf("soak.lost: %+v, lost %d", c, res.Soak.Lost)
		}
	}
	if !strings.Contains(res.Verdict, "soak.lost") {
		t.Fatalf("verdict %q does not name soak.lost", res.Verdict)
	}
}

// A soak run is refused when its settings leave the growth rule too few
// samples.
func TestSoakConfig(t *testing.T) {
	_, err := parseConfig([]string{"--mode", "soak", "--publisher-token", "p", "--client-token", "c", "--duration", "10s", "--sample-every", "2s"}, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Setting != "sample-every" {
		t.Fatalf("sample-every over duration/8: %v", err)
	}
	if _, err := parseConfig([]string{"--mode", "soak", "--server-bin", "/bin/rendezvous", "--duration", "30m"}, nil); err != nil {
		t.Fatalf("soak with --server-bin and no tokens: %v", err)
	}
}

// Against a remote server (no PID), the soak samples RSS and goroutines
// from /metrics; without process_open_fds there, the fds check is skipped
// rather than passed.
func TestSampleServerRemote(t *testing.T) {
	var fds atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("# HELP go_goroutines Goroutines.\n# TYPE go_goroutines gauge\ngo_goroutines 42\n" +
			"process_resident_memory_bytes 1.048576e+07\n"))
		if fds.Load() {
			w.Write([]byte("process_open_fds 17\n"))
		}
	}))
	defer srv.Close()
	api, err := newAPISet(strings.TrimPrefix(srv.URL, "http://"), 1, time.Second, &Tokens{})
	if err != nil {
		t.Fatal(err)
	}
	r := &Run{cfg: &Config{}, api: api, ctx: context.Background()}
	p, err := r.sampleServer()
	if err != nil || p.Goroutines != 42 || p.RSSBytes != 10<<20 || p.FDs != -1 {
		t.Fatalf("remote sample without fds: %+v %v", p, err)
	}
	fds.Store(true)
	if p, err = r.sampleServer(); err != nil || p.FDs != 17 || p.TesterConns != 1 {
		t.Fatalf("remote sample with process_open_fds: %+v %v", p, err)
	}
	api.hc.CloseIdleConnections()
	if n := api.openConns(); n != 0 {
		t.Fatalf("%d connections counted open after closing the idle pool", n)
	}
	s := &SoakSummary{Seconds: 40}
	for i := 0; i <= 40; i++ {
		s.Samples = append(s.Samples, ResourceSample{T: float64(i), RSSBytes: 10 << 20, FDs: -1, Goroutines: 42})
	}
	var res Result
	res.addGrowthChecks(s, 0.1)
	res.decide()
	marks := map[string]string{}
	for _, c := range res.Checks {
		marks[c.Name] = c.Mark()
	}
	if marks["soak.fds"] != "SKIP" || marks["soak.rss_bytes"] != "PASS" || marks["soak.goroutines"] != "PASS" ||
		!res.Passed || !strings.Contains(res.Verdict, "skipped") {
		t.Fatalf("checks %v, verdict %q", marks, res.Verdict)
	}
}
