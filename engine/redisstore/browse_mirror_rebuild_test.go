package redisstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestBrowseMirrorRebuildsPastTheTrimmedLog: an instance whose version
// the log no longer holds (trimmed by thousands of renewals while it did
// not browse) rebuilds its index from the snapshot and shows every change.
func TestBrowseMirrorRebuildsPastTheTrimmedLog(t *testing.T) {
	f := newMirrorFixture(t)
	vs := f.visibleListings(100)
	f.check(f.b, "the listings")
	f.trimLog(vs)
	f.check(f.b, "the log trimmed past b's version")
	f.check(f.a, "the log trimmed past a's version")
}

// visibleListings makes n visible listings through a, in two regions.
func (f *mirrorFixture) visibleListings(n int) []engine.ListingView {
	f.t.Helper()
	vs := make([]engine.ListingView, n)
	for i := range vs {
		vs[i] = f.create(f.a, "o", []string{"eu", "us"}[i%2], 1)
		f.refresh(f.a, vs[i])
	}
	return vs
}

// trimLog renews vs (100 of them) through a, 170 times each, from ten
// goroutines: 17,000 entries, more than the log keeps (2 x 8192), so every
// instance's version is trimmed away.
func (f *mirrorFixture) trimLog(vs []engine.ListingView) {
	f.t.Helper()
	const renewals = 170
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(vs); i += 10 {
				for n := 0; n < renewals; n++ {
					f.renew(f.a, &vs[i], (n+i)%8)
				}
			}
		}()
	}
	wg.Wait()
	if !f.logTrimmed() {
		f.t.Fatal("the log was not trimmed: the test does not test a rebuild")
	}
}

// TestBrowseMirrorRebuildsOnANewGeneration: a promotion (meta's gen moves,
// as the first call on a promoted replica does) makes an instance rebuild
// rather than trust versions counted on another primary. Here the log
// also lost its last entries, as a promoted replica may.
func TestBrowseMirrorRebuildsOnANewGeneration(t *testing.T) {
	f := newMirrorFixture(t)
	v1 := f.create(f.a, "o1", "eu", 1)
	f.refresh(f.a, v1)
	f.check(f.b, "a listing")
	v2 := f.create(f.a, "o2", "eu", 1)
	f.refresh(f.a, v2)
	// Drop the last entry (v2 becoming visible) and move the generation:
	// without a rebuild, b would miss v2 once the log reached its version
	// again.
	if err := f.a.RunScript(context.Background(), `redis.call('RPOP', KEYS[1] .. 'bl')
redis.call('HINCRBY', KEYS[1] .. 'meta', 'gen', 1)
return 1`); err != nil {
		t.Fatal(err)
	}
	v3 := f.create(f.a, "o3", "eu", 1)
	f.refresh(f.a, v3)
	f.check(f.b, "a new generation")
	if n := count(t, f.b, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1}); n != 3 {
		t.Fatalf("b browses %d listings after the new generation, want 3", n)
	}
}

// TestBrowseMirrorRestartedMidChurn: an instance started while another
// creates, refreshes, renews and deletes listings converges: once the
// churn stops, every page it serves is the shared state's.
func TestBrowseMirrorRestartedMidChurn(t *testing.T) {
	f := newMirrorFixture(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.churn(f.a, stop, nil)
	}()
	ctx := context.Background()
	var c *redisstore.Store
	for i := 0; i < 20; i++ {
		c = f.instance() // a restart: a new store with an empty index
		for j := 0; j < 5; j++ {
			if _, _, r, err := c.BrowseItems(ctx, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: 100}, nil); err != nil || !r.OK() {
				t.Fatalf("browse on a restarted instance: %v %v", r.Outcome, err)
			}
		}
	}
	close(stop)
	<-done
	f.check(c, "a restart during churn")
	if err := f.a.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// logTrimmed reports whether the deployment's log was ever trimmed.
func (f *mirrorFixture) logTrimmed() bool {
	err := f.a.RunScript(context.Background(), `if redis.call('HGET', KEYS[1] .. 'meta', 'blbase') then return 1 end
return redis.error_reply('untrimmed')`)
	return err == nil
}
