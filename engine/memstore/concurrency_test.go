package memstore

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// TestMemStoreConcurrent runs writers, batches and lock-free readers at once
// (bounded loops; run with -race) and then checks every invariant.
func TestMemStoreConcurrent(t *testing.T) {
	f := newFx(t, func(l *engine.Limits) { l.MaxAttempts = 200; *l = l.WholePools() })
	var vs []engine.ListingView
	for i := 0; i < 8; i++ {
		vs = append(vs, f.visible(engine.Subject(fmt.Sprintf("pub-%d", i%3))))
	}
	var atts []engine.AttemptView
	for i := 0; i < 32; i++ {
		atts = append(atts, f.attempt(vs[i%8], "c"))
	}
	var wg sync.WaitGroup
	const rounds = 200
	wg.Go(func() { // presence heartbeats and clock movement
		for i := 0; i < rounds; i++ {
			v := vs[i%8]
			f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: uint64(i + 2), Public: fxPub(40000)})
			if i%50 == 0 {
				f.clock.Advance(time.Second)
			}
		}
	})
	wg.Go(func() { // batched binds
		for i := 0; i < rounds; i++ {
			a := atts[i%len(atts)]
			ops := []engine.Op{{Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.RoleHost, 1000)}, {Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.RoleClient, 2000)}}
			f.s.ApplyBatch(f.ctx, ops)
		}
	})
	wg.Go(func() { // lock-free readers
		for i := 0; i < rounds; i++ {
			f.s.AttemptHost(atts[i%len(atts)].Handle)
			f.s.Available()
			f.s.Draining()
		}
	})
	wg.Go(func() { // creation, browse and removal
		for i := 0; i < rounds/4; i++ {
			v := f.visibleQuiet(engine.Subject(fmt.Sprintf("pub-x%d", i%4)))
			f.s.BrowseVisible(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 5}, nil)
			f.s.CreateJoinAttempt(f.ctx, engine.CreateAttempt{Tenant: fxTenant, Client: "c2", IdempotencyKey: fmt.Sprintf("cc-%d", i), Listing: v.ID, ProtocolVersion: 7})
			if i%3 == 0 {
				f.s.RevokeListing(f.ctx, engine.RevokeListing{Tenant: fxTenant, Listing: v.ID})
			}
			f.s.Stats()
		}
	})
	wg.Wait()
	f.check()
}

// visibleQuiet is visible without test assertions (safe off the test goroutine).
func (f *fx) visibleQuiet(owner engine.Subject) engine.ListingView {
	f.seq2.Lock()
	f.seq++
	n := f.seq
	f.seq2.Unlock()
	cmd := engine.CreateListing{Tenant: fxTenant, Owner: owner, IdempotencyKey: fmt.Sprintf("q-%d", n), Spec: storetest.Spec()}
	v, _, _ := f.s.CreateListing(f.ctx, cmd)
	f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 1, Public: fxPub(40000)})
	return v
}
