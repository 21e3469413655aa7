package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/httpapi"
)

// freshStats reads p's GET /v1/admin/stats into out with figures read from
// the store after freshStats began: the instance keeps them for
// httpapi.DefaultStoreStatsMaxAge, so once that has passed (and the tests
// have no other reader) the read refreshes them, and what the test did
// before the call shows.
func (p *proc) freshStats(t testing.TB, token string, out any) {
	t.Helper()
	time.Sleep(httpapi.DefaultStoreStatsMaxAge + 150*time.Millisecond)
	p.call("GET", "/v1/admin/stats", token, nil).expect(t, "stats", http.StatusOK, out)
}
