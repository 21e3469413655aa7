package main

import (
	"net/http"
	"slices"
	"syscall"
	"testing"
)

// TestE2ERestartAfterDrain: the restart of operations.md (SIGTERM the old
// process, start the new one on the same store) serves again: the new
// process is ready and takes new listings. On the memory store it starts
// empty, the drained process's listing gone; on Redis SIGTERM drained that
// instance only, so the listing lives on in the shared state and the new
// process serves it.
func TestE2ERestartAfterDrain(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		shared := storeOf(storeArgs) == "redis"
		old := startProc(t, append(storeArgs, "--drain-window", "30s")...)
		h := publishHost(t, old, "restart-1", "Before the restart")
		old.signal(syscall.SIGTERM)
		if code := old.wait(); code != 0 {
			t.Fatalf("drained process: exit status %d, want 0; log:\n%s", code, old.stderr.String())
		}

		p := startProc(t, storeArgs...)
		p.call("GET", "/readyz", "", nil).expect(t, "readyz after the restart", http.StatusOK, nil)
		get := p.call("GET", "/v1/listings/"+h.pub.ListingID, p.tokens["client"], nil)
		if shared {
			get.expect(t, "the drained instance's listing after the restart", http.StatusOK, nil)
		} else if code := get.problemCode(t); code != "not_found" {
			t.Fatalf("the drained process's listing after the restart: %q, want not_found", code)
		}
		publishHost(t, p, "restart-2", "After the restart")
		var page browsePage
		p.call("GET", "/v1/listings?protocol_version=7", p.tokens["client"], nil).expect(t, "browse after the restart", http.StatusOK, &page)
		want := []string{"After the restart"}
		if shared {
			want = []string{"Before the restart", "After the restart"}
		}
		var got []string
		for _, it := range page.Items {
			got = append(got, it.DisplayName)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("browse after the restart: %q, want %q", got, want)
		}
	})
}
