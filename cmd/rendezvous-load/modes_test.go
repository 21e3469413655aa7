package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestLoadAndUDPRateModes runs the other two modes against the real server:
// load mode with joins (each completing both binds and the introduction)
// and udprate in both flavours. Rates are small; only outcomes are asserted.
func TestLoadAndUDPRateModes(t *testing.T) {
	dir := t.TempDir()
	server := buildBinary(t, dir, "./cmd/rendezvous")
	load := buildBinary(t, dir, "./cmd/rendezvous-load")
	principals, tokens := filepath.Join(dir, "principals.json"), filepath.Join(dir, "tokens.json")
	if b, err := exec.Command(load, "principals", "--publishers", "5", "--clients", "2",
		"--principals-out", principals, "--tokens-out", tokens).CombinedOutput(); err != nil {
		t.Fatalf("principals: %v\n%s", err, b)
	}
	srv, httpAddr := startServer(t, server, "--principals", principals, "--drain-window", "1s")
	pid := strconv.Itoa(srv.Process.Pid)
	read := func(out string) *Result {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		var res Result
		if err := json.Unmarshal(data, &res); err != nil {
			t.Fatal(err)
		}
		return &res
	}
	runLoad := func(out string, args ...string) *Result {
		t.Helper()
		b, err := exec.Command(load, append(args, "--out", out, "--server-pid", pid, "--timeout", "20s")...).CombinedOutput()
		if err != nil {
			t.Fatalf("rendezvous-load %v: %v\n%s", args, err, tail(string(b), 40))
		}
		return read(out)
	}

	res := runLoad(filepath.Join(dir, "load"), "--mode", "load", "--http", httpAddr, "--tokens", tokens,
		"--listings", "200", "--duration", "3s", "--ramp", "1s", "--rate", "browse=50,get=50,join=40,create=5")
	if !res.Passed || res.Fill.Presence.Admitted != 200 {
		t.Fatalf("load mode: passed %v, presence %d, checks %+v", res.Passed, res.Fill.Presence.Admitted, res.Checks)
	}
	var ph *PhaseSummary
	for i := range res.Phases {
		if res.Phases[i].Name == "load" {
			ph = &res.Phases[i]
		}
	}
	if ph == nil {
		t.Fatal("no load phase in the result")
	}
	got := map[string]KindSummary{}
	for _, k := range ph.Kinds {
		got[k.Kind] = k
	}
	for _, k := range []string{"browse", "get", "join", "create", "bind", "presence", "renew"} {
		if got[k].OK == 0 || got[k].Errors != 0 {
			t.Fatalf("kind %s in the load phase: %+v", k, got[k])
		}
	}
	if got["bind"].OK != 2*got["join"].OK {
		t.Fatalf("%d binds for %d joins, want two each", got["bind"].OK, got["join"].OK)
	}

	// The authenticated presence rate and the plain Binding rate.
	res = runLoad(filepath.Join(dir, "presence"), "--mode", "udprate", "--stun", "presence", "--listings", "200",
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
	res = runLoad(filepath.Join(dir, "plain"), "--mode", "udprate", "--stun", "plain", "--mediator", res.Mediator,
		"--duration", "1s", "--window", "32")
	if u := res.UDPRate; u == nil || u.OK == 0 || u.OK != u.Answered || u.Kind != "plain" {
		t.Fatalf("udprate plain: %+v", res.UDPRate)
	}
}
