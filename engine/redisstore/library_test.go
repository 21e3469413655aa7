package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestLibraryReloadedAfterFlush: a server that lost the function library
// (FUNCTION FLUSH, or a replica promoted without it) gets it again on the
// next call, which then runs once.
func TestLibraryReloadedAfterFlush(t *testing.T) {
	e := newFaultEnv(t, time.Second)
	if err := e.redis("FUNCTION", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	_, r, err := e.s.CreateListing(context.Background(), e.listingCmd())
	if err != nil || !r.OK() {
		t.Fatalf("CreateListing after FUNCTION FLUSH = %v, %v", r.Outcome, err)
	}
	if st := e.s.Stats(); st.Pools[engine.PoolListings-1].Used != 2 {
		t.Fatalf("listings after the reload = %d, want 2 (the call ran once)", st.Pools[engine.PoolListings-1].Used)
	}
}

// TestNewReplacesAnotherLibraryVersion: an instance of another build left
// its library on the server; New loads this build's.
func TestNewReplacesAnotherLibraryVersion(t *testing.T) {
	_, c := dedicatedServer(t)
	ctx := context.Background()
	old := "#!lua name=rendezvous\nredis.register_function{function_name = 'rdv_version', flags = {'no-writes'}, callback = function() return 'old' end}\n"
	if err := c.Do(ctx, c.B().FunctionLoad().Replace().FunctionCode(old).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(ctx, redisstore.Config{Client: c, Limits: engine.DefaultLimits(), Keyring: engine.RandomKeyring()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	v, err := c.Do(ctx, c.B().Fcall().Function("rdv_version").Numkeys(0).Build()).ToString()
	if err != nil || v == "old" {
		t.Fatalf("library version after New = %q, %v", v, err)
	}
	if st := s.Stats(); !st.Available {
		t.Fatalf("store on the new library unavailable")
	}
}
