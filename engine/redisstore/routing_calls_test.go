package redisstore_test

import (
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// TestRoutedJoinAndRenewalAreOneCallEach: with a registry, a join attempt
// and a lease renewal, the mediator their answers name included, cost one
// FCALL each: the route comes from the view and the registry as this
// instance last renewed it.
func TestRoutedJoinAndRenewalAreOneCallEach(t *testing.T) {
	_, c := dedicatedServer(t)
	k := engine.RandomKeyring()
	// An hour's lease: no registry renewal (every lease/4) runs while the
	// calls are counted. a registers last, so its registration lists b.
	b := registeredStoreOn(t, c, "calls", "127.0.0.1:4002", time.Hour, k)
	a := registeredStoreOn(t, c, "calls", "127.0.0.1:4001", time.Hour, k)
	l := newRoutedListing(t, a, k, "calls")
	l.bind(b, 1)
	for _, step := range []struct {
		name  string
		route func() string
	}{
		{"join", func() string { return l.joinRoute(a) }},
		{"renewal", func() string { return l.renewRoute(a) }},
	} {
		before := functionCalls(t, c)
		if got := step.route(); got != "127.0.0.1:4002" {
			t.Fatalf("%s through a names %s, want b's mediator where the presence is", step.name, got)
		}
		if got := functionCalls(t, c) - before; got != 1 {
			t.Errorf("%s with its route: %d function calls, want 1", step.name, got)
		}
	}
}
