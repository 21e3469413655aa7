package main

import (
	"net/http"
	"syscall"
	"testing"
)

// TestE2ERestartAfterDrain: the restart of operations.md (SIGTERM the old
// process, start the new one on the same store) serves again: the new
// process is ready, takes new listings, and starts empty, the drained
// process's listing gone, on either store. On Redis the drain is kept in
// the shared state, which outlives the process that began it.
func TestE2ERestartAfterDrain(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		old := startProc(t, append(storeArgs, "--drain-window", "30s")...)
		h := publishHost(t, old, "restart-1", "Before the restart")
		old.signal(syscall.SIGTERM)
		if code := old.wait(); code != 0 {
			t.Fatalf("drained process: exit status %d, want 0; log:\n%s", code, old.stderr.String())
		}

		p := startProc(t, storeArgs...)
		p.call("GET", "/readyz", "", nil).expect(t, "readyz after the restart", http.StatusOK, nil)
		if code := p.call("GET", "/v1/listings/"+h.pub.ListingID, p.tokens["client"], nil).problemCode(t); code != "not_found" {
			t.Fatalf("the drained process's listing after the restart: %q, want not_found", code)
		}
		publishHost(t, p, "restart-2", "After the restart")
		var page browsePage
		p.call("GET", "/v1/listings?protocol_version=7", p.tokens["client"], nil).expect(t, "browse after the restart", http.StatusOK, &page)
		if len(page.Items) != 1 || page.Items[0].DisplayName != "After the restart" {
			t.Fatalf("browse after the restart: %+v, want only the new listing", page)
		}
	})
}
