package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// fakeServer answers /v1/whoami with roles and every create with status
// and problem code, on loopback: what a misconfigured or foreign server
// looks like to the load tester.
func fakeServer(t *testing.T, roles []string, whoamiStatus, createStatus int, createCode string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		problem := func(status int, code string) {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]string{"title": code, "code": code})
		}
		switch {
		case r.URL.Path == "/v1/whoami" && whoamiStatus == http.StatusOK:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"subject": "s", "game_id": "demo", "environment_id": "dev", "roles": roles})
		case r.URL.Path == "/v1/whoami" && whoamiStatus == http.StatusNotFound:
			http.NotFound(w, r) // a foreign HTTP server: plain text, no problem code
		case r.URL.Path == "/v1/whoami":
			problem(whoamiStatus, "unauthorized")
		case r.URL.Path == "/v1/listings" && r.Method == http.MethodPost:
			problem(createStatus, createCode)
		default:
			problem(http.StatusNotFound, "not_found")
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// runTester runs the load tester in process and returns its exit code,
// output and how long it took.
func runTester(t *testing.T, args ...string) (int, string, time.Duration) {
	t.Helper()
	var out strings.Builder
	t0 := time.Now()
	code := run(append(args, "--out", t.TempDir()), &out, &out, false)
	return code, out.String(), time.Since(t0)
}

// TestUnreachableOnlyWhenNothingAnswered: a 401, a client's token given as
// the publisher's and a foreign HTTP server each get their own message;
// "cannot reach" is kept for a port where nothing answers.
func TestUnreachableOnlyWhenNothingAnswered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for _, c := range []struct {
		name, addr, want string
	}{
		{"401", fakeServer(t, nil, http.StatusUnauthorized, 0, ""), "refused the first publisher token (401 unauthorized)"},
		{"client token", fakeServer(t, []string{"client"}, http.StatusOK, 0, ""), "token of role client (subject s), not a publisher's"},
		{"foreign server", fakeServer(t, nil, http.StatusNotFound, 0, ""), "is it a Rendezvous server?"},
		{"nothing", closed, "cannot reach the server at " + closed + " (nothing answered)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, _ := runTester(t, "--mode", "load", "--http", c.addr, "--publisher-token", "p", "--client-token", "c", "--timeout", "2s", "--listings", "10")
			if code != exitError || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want %d and %q in:\n%s", code, exitError, c.want, out)
			}
			if c.name != "nothing" && strings.Contains(out, "cannot reach") {
				t.Fatalf("the server answered, yet the tester says it cannot reach it:\n%s", out)
			}
		})
	}
}

// TestSetupAdmittingNothingEndsTheRun: every create refused by a quota ends
// a load run at once (not after --duration), naming the code and what to
// raise.
func TestSetupAdmittingNothingEndsTheRun(t *testing.T) {
	addr := fakeServer(t, []string{"publisher"}, http.StatusOK, http.StatusTooManyRequests, "quota_exceeded")
	code, out, took := runTester(t, "--mode", "load", "--http", addr, "--publisher-token", "p", "--client-token", "c",
		"--listings", "20", "--duration", "60s", "--rate", "browse=10")
	if code == exitOK || !strings.Contains(out, "the setup admitted none of 20 listings") || !strings.Contains(out, "quota_exceeded=20") ||
		!strings.Contains(out, "--tenant-") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if took > 20*time.Second {
		t.Fatalf("the run went on for %v after its setup admitted nothing", took)
	}
}

// TestPlanFits: a fill the tenant quota cannot hold is refused before it
// starts, naming the quota, its value and the flag and variable to raise;
// so is one the idempotency records of an earlier run leave no room for.
func TestPlanFits(t *testing.T) {
	lim := &serverLimits{
		Pools: map[string]client.PoolStat{"listings": {Used: 0, Ceiling: 25000}, "attempts": {Used: 0, Ceiling: 10000}, "idempotency": {Used: 0, Ceiling: 35000}},
		Quotas: map[string]int{"owner_listings": 100, "subject_attempts": 1000, "tenant_listings": 12500,
			"tenant_attempts": 5000, "tenant_idempotency": 17500},
	}
	p := plan{listings: 25000, attempts: 10000, publishers: 260, clients: 4, game: "demo", env: "dev", idempotencyPerCreate: 1}
	err := lim.fits(p)
	if err == nil {
		t.Fatal("a fill of 25,000 listings fits a tenant quota of 12,500")
	}
	for _, want := range []string{
		"the tenant demo/dev's listings quota is 12500 listings with 0 in use, the run needs 25000 more: raise --tenant-listing-quota (RDV_TENANT_LISTING_QUOTA)",
		"--tenant-attempt-quota (RDV_TENANT_ATTEMPT_QUOTA)", "--tenant-idempotency-quota (RDV_TENANT_IDEMPOTENCY_QUOTA)",
		"the subject attempt quota is 1000 per client", "--subject-attempt-quota (RDV_SUBJECT_ATTEMPT_QUOTA)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("lacks %q:\n%v", want, err)
		}
	}
	lim.Quotas = map[string]int{"owner_listings": 100, "subject_attempts": 10000, "tenant_listings": 25000, "tenant_attempts": 10000, "tenant_idempotency": 35000,
		"subject_idempotency": 3500}
	if err := lim.fits(p); err != nil {
		t.Fatalf("whole-pool quotas refused: %v", err)
	}
	// Two clients making 10,000 attempts keep 5,000 records each.
	few := p
	few.clients = 2
	if err := lim.fits(few); err == nil || !strings.Contains(err.Error(), "the subject idempotency quota is 3500 records per principal, and 10000 creates over 2 clients leave 5000 records each") ||
		!strings.Contains(err.Error(), "--subject-idempotency-quota (RDV_SUBJECT_IDEMPOTENCY_QUOTA)") {
		t.Fatalf("a per-principal idempotency share too small not named: %v", err)
	}
	// An earlier run's idempotency records still fill the pool.
	lim.Pools["idempotency"] = client.PoolStat{Used: 34000, Ceiling: 35000}
	lim.Pools["listings"] = client.PoolStat{Used: 0, Ceiling: 25000}
	err = lim.fits(plan{listings: 2000, publishers: 260, clients: 4, game: "demo", env: "dev", idempotencyPerCreate: 1})
	if err == nil || !strings.Contains(err.Error(), "the idempotency pool is 35000 records") || !strings.Contains(err.Error(), "--max-idempotency") {
		t.Fatalf("a full idempotency pool not named: %v", err)
	}
}

// TestFillRefusalsNamed: a fill's refusals are named by code with what to
// raise.
func TestFillRefusalsNamed(t *testing.T) {
	var f fillResult
	for range 3 {
		f.refused(CodeQuota, nil)
	}
	f.refused(CodeForbidden, nil)
	got := f.refusals()
	for _, want := range []string{"quota_exceeded=3", "--tenant-*-quota", "--subject-idempotency-quota", "forbidden=1", "publisher's token"} {
		if !strings.Contains(got, want) {
			t.Fatalf("lacks %q: %s", want, got)
		}
	}
	// The quota the server named is counted and its flag given.
	var named fillResult
	for _, q := range []string{"subject_idempotency", "subject_idempotency", "tenant_listings"} {
		named.refused(CodeQuota, &client.APIError{Status: 429, Code: "quota_exceeded", Detail: "quota " + q + " is exhausted"})
	}
	got = named.refusals()
	for _, want := range []string{"quota_exceeded=3",
		"subject_idempotency=2: raise --subject-idempotency-quota (RDV_SUBJECT_IDEMPOTENCY_QUOTA)",
		"tenant_listings=1: raise --tenant-listing-quota (RDV_TENANT_LISTING_QUOTA)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("lacks %q: %s", want, got)
		}
	}
}

// TestProgressFirstLineRate: the first progress line of a phase divides
// the phase's counts by the time since the phase began, not by the last
// sample period (which overstated it 3-4x).
func TestProgressFirstLineRate(t *testing.T) {
	t0 := time.Now()
	old := new(Recorder)
	var w window
	var cur Counts
	var curH [numKinds]HistSnapshot
	w.point(old, t0, t0, &cur, &curH)
	rec := &Recorder{started: t0.Add(750 * time.Millisecond)}
	for range 1000 {
		rec.Observe(KindCreate, CodeOK, time.Millisecond)
	}
	rec.Load(&cur)
	// Printed one second after the phase began; the last sample was 250 ms ago.
	p := w.point(rec, t0.Add(1750*time.Millisecond), t0.Add(1500*time.Millisecond), &cur, &curH)
	if got := p.Rate[KindCreate][ClassOK]; got < 990 || got > 1010 {
		t.Fatalf("first line rate %.0f/s, want 1000/s", got)
	}
}
