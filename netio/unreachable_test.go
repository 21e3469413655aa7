package netio

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/memstore"
)

// unreachableStore is a MemStore behind a shared store's server that went
// away: commits answer ServiceUnavailable marked Unreachable (nothing
// erased), and, once lookups is set, attempt lookups get no answer either.
type unreachableStore struct {
	*memstore.Store
	commits, lookups atomic.Bool
}

func (s *unreachableStore) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	if !s.commits.Load() {
		return s.Store.ApplyBatch(ctx, ops)
	}
	for i := range ops {
		ops[i].Result = engine.Result{Outcome: engine.ServiceUnavailable, Unreachable: true}
	}
	return nil
}

func (s *unreachableStore) ResolveAttemptHost(h engine.Handle) (engine.Handle, bool, bool) {
	if s.lookups.Load() {
		return engine.Handle{}, false, false
	}
	p, ok := s.Store.AttemptHost(h)
	return p, ok, true
}

// TestUnreachableStoreHostBind: a host's attempt bind on a store that did
// not answer is a signed 503 when the key was derived before the commit
// failed (the attempt was not erased: unlike a store marked unavailable,
// whose erased attempts answer the unsigned 401), and no answer at all when
// the attempt could not even be looked up; an unsigned 401 would tell the
// host its attempt is gone. Nothing changes in the store.
func TestUnreachableStoreHostBind(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	st := &unreachableStore{Store: f.store}
	m := f.mediatorOn(st)
	p := f.peer()
	wantSuccess(t, p.roundTrip(signedReq('p', v.Presence, pc[:], seq(1))), pc[:], p.addr())
	a := f.attempt(v)
	hc := hostCap(v.Presence, a.Handle)
	before := f.store.Snapshot()

	st.commits.Store(true)
	wantError(t, p.roundTrip(signedReq('h', a.Handle, hc[:])), 503, hc[:])
	wantError(t, p.roundTrip(signedReq('p', v.Presence, pc[:], seq(2))), 503, pc[:])

	st.lookups.Store(true)
	p.send(signedReq('h', a.Handle, hc[:]))
	p.barrier()
	// The batch's counters are published after its answers are sent.
	for i := 0; m.met.drops[dropStore].Get() != 1; i++ {
		if i == 1000 {
			t.Fatalf("dropped (store) %d, want 1", m.met.drops[dropStore].Get())
		}
		time.Sleep(time.Millisecond)
	}
	if f.store.Snapshot() != before {
		t.Fatal("answers of an unreachable store changed the store")
	}

	// The server is back: the same bind succeeds.
	st.commits.Store(false)
	st.lookups.Store(false)
	wantSuccess(t, p.roundTrip(signedReq('h', a.Handle, hc[:])), hc[:], p.addr())
}
