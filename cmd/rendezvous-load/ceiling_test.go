package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestCeilingProof is the ceiling proof, run in CI: the real server with
// default ceilings is filled to 25,000 listings with presence and 10,000
// attempts through its APIs, then offered 2x overload; every over-ceiling
// request must get the typed shed answer and no admitted listing may be
// lost. Latency is reported, not asserted (speed is shown by the benchmarks
// and docs/benchmarks.md).
func TestCeilingProof(t *testing.T) { ceilingProof(t) }

// TestCeilingProofRedis is the same proof on the Redis store: the ceilings
// and quotas are decided inside Redis Functions, and the fill, the exact
// shedding and the enumeration of every admitted listing go through the
// same APIs.
func TestCeilingProofRedis(t *testing.T) {
	srv := redistest.Require(t)
	key := filepath.Join(t.TempDir(), "capability.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("5a", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	ceilingProof(t, "--store", "redis", "--redis-addr", srv.Addr, "--redis-name", "ceiling", "--capability-key-file", key)
}

// ceilingProof runs the proof on a server started with storeArgs.
func ceilingProof(t *testing.T, storeArgs ...string) {
	dir := t.TempDir()
	server := buildBinary(t, "./cmd/rendezvous")
	load := buildBinary(t, "./cmd/rendezvous-load")
	principals, tokens := filepath.Join(dir, "principals.json"), filepath.Join(dir, "tokens.json")
	// 260 publishers at the default owner quota of 100 cover 25,000 listings.
	if b, err := exec.Command(load, "principals", "--publishers", "260", "--clients", "4",
		"--principals-out", principals, "--tokens-out", tokens).CombinedOutput(); err != nil {
		t.Fatalf("principals: %v\n%s", err, b)
	}
	// A short drain window only makes the shutdown after the test quick. The
	// proof fills every pool from one tenant and four clients, so each quota
	// is set to its whole pool explicitly (the defaults keep a tenant to half).
	// Relaying is on (the server only mints credentials; no relay is
	// needed) and half the joins are relay-only: shedding stays exact.
	secret := filepath.Join(dir, "turn-secret")
	if err := os.WriteFile(secret, []byte("ceiling-proof-turn-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, httpAddr := startServer(t, server, append([]string{"--principals", principals, "--drain-window", "1s",
		"--turn-uri", "turn:127.0.0.1:3478?transport=udp", "--turn-secret-file", secret, "--relay-allow-peers", "127.0.0.0/8",
		"--relay-credentials-per-minute", "1000000", // one client token makes every join
		"--tenant-listing-quota", "25000", "--tenant-attempt-quota", "10000",
		"--subject-attempt-quota", "10000", "--tenant-idempotency-quota", "35000",
		"--subject-idempotency-quota", "35000"}, storeArgs...)...)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(load, "--mode", "shed", "--http", httpAddr, "--tokens", tokens, "--overload", "2",
		"--duration", "8s", "--shed-p99", "0", "--min-offered", "0", "--progress", "2s", "--timeout", "20s",
		"--server-pid", strconv.Itoa(srv.Cmd.Process.Pid), "--relay-only", "0.5", "--out", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rendezvous-load --mode shed failed (%v):\n%s", err, tail(string(b), 60))
	}
	res := readResult(t, out)
	f := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Fatalf(format+"\n%s", append(args, tail(string(b), 40))...)
		}
	}
	f(res.Passed, "result.json says the run did not pass")
	f(res.Ceilings["listings"] == 25000 && res.Ceilings["attempts"] == 10000, "ceilings %v are not the defaults", res.Ceilings)
	f(res.Fill.Listings.Admitted == 25000 && res.Fill.Presence.Admitted == 25000 && res.Fill.Attempts.Admitted == 10000,
		"fill admitted %d listings, %d presence, %d attempts", res.Fill.Listings.Admitted, res.Fill.Presence.Admitted, res.Fill.Attempts.Admitted)
	s := res.Shed
	f(s != nil && s.OfferedOverCeiling > 1000, "too little overload offered: %+v", s)
	f(s.TypedShed == s.OfferedOverCeiling && s.Untyped == 0 && s.TypedPct == 100, "not every over-ceiling request was shed typed: %+v", s)
	f(s.Lost == 0 && s.LostSampled == 0 && s.LostEnumerated == 0 && s.Enumerated == 25000 && s.Sampled > 0, "admitted listings lost: %+v", s)
	f(s.AcceptedFailed == 0, "accepted work failed: %+v", s)
	f(s.ShedP99ms > 0, "shed p99 not reported")
	rl := res.Relay
	f(rl != nil && rl.Admitted == 5000 && rl.WithCredentials == rl.Admitted && rl.AnyWithCredentials == 5000, // only relay-only joins carry one
		"relay-only attempts or credentials missing: %+v", rl)
	f(res.Fill.UsageAtFull != nil && res.Fill.UsageAtFull.RSSBytes > 0, "server RSS not reported")
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Fatalf("no report.html: %v", err)
	}
	t.Logf("fill %.1fs, RSS %.1f MiB, %d/%d typed shed, shed p99 %.3f ms; %d of %d admitted relay-only attempts got credentials",
		res.Fill.TotalSeconds, res.Fill.RSSMiB, s.TypedShed, s.OfferedOverCeiling, s.ShedP99ms, rl.WithCredentials, rl.Admitted)
}

// TestExitCodes runs the binary's entry point on bad usage and on an
// unreachable server: each gets its documented status and a message naming
// the problem.
func TestExitCodes(t *testing.T) {
	f := func(want int, wantMsg string, args ...string) {
		t.Helper()
		var stdout, stderr strings.Builder
		if got := run(args, &stdout, &stderr, false); got != want {
			t.Fatalf("run(%q) = %d, want %d\n%s", args, got, want, stderr.String())
		}
		if !strings.Contains(stderr.String(), wantMsg) {
			t.Fatalf("run(%q) stderr %q lacks %q", args, stderr.String(), wantMsg)
		}
	}
	f(exitUsage, "invalid mode", "--mode", "nope", "--publisher-token", "x", "--client-token", "y")
	f(exitUsage, "invalid tokens")
	// A port nobody listens on: the run cannot be carried out.
	f(exitError, "cannot reach the server", "--http", "127.0.0.1:1", "--publisher-token", "x", "--client-token", "y", "--timeout", "1s")
	f(exitUsage, "invalid publishers", "principals", "--publishers", "0")
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... %d lines omitted", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
