package main

import (
	"net/http"
	"testing"
	"time"
)

// freshStats reads p's GET /v1/admin/stats into out once its figures were
// read from the store after freshStats began (the instance refreshes them
// at most once a second): what the test did before the call shows in
// them. age_ms, with a margin for the answer's way back, tells.
func (p *proc) freshStats(t testing.TB, token string, out any) {
	t.Helper()
	const margin = 50 * time.Millisecond
	start := time.Now()
	time.Sleep(margin + 10*time.Millisecond)
	for deadline := start.Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		r := p.call("GET", "/v1/admin/stats", token, nil)
		var age struct {
			AgeMS *int64 `json:"age_ms"`
		}
		r.expect(t, "stats", http.StatusOK, &age)
		if age.AgeMS == nil {
			t.Fatalf("stats without age_ms: %s", r.body)
		}
		if time.Duration(*age.AgeMS)*time.Millisecond+margin <= time.Since(start) {
			r.expect(t, "stats", http.StatusOK, out)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats never read from the store after the call began: %s", r.body)
		}
	}
}
