package httpapi

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// unreachableStore fails every GetListing as a store that lost its server
// does.
type unreachableStore struct{ engine.Store }

func (unreachableStore) GetListing(context.Context, engine.GetListing) (engine.ListingView, engine.Result, error) {
	return engine.ListingView{}, engine.Result{}, errors.New("store: connection refused")
}

// TestStoreErrorsLogOncePerInterval: while the store fails every call, each
// request is a typed 503, and the log gets one line for the burst, not one
// per request.
func TestStoreErrorsLogOncePerInterval(t *testing.T) {
	h := newHarness(t, testLimits(), func(c *Config) { c.Store = unreachableStore{c.Store} })
	const requests = 50
	for range requests {
		h.expect(req{method: "GET", path: "/v1/listings/00000000-0000-4000-8000-000000000001", token: tokCli}, 503, "service_unavailable")
	}
	if n := strings.Count(h.logs.String(), "store transitions failed"); n != 1 {
		t.Fatalf("%d log lines for %d failed store calls within one interval, want 1:\n%s", n, requests, h.logs.String())
	}
}
