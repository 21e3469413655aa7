package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// keepers refresh every held listing's presence and renew its lease in
// round-robin order at n/interval per second, for as long as ctx lives, so
// admitted state never lapses on the load tester's account. Their answers
// are "accepted work": each should succeed.
type keepers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startKeepers keeps every held listing alive. In soak mode, where the set
// of held listings changes, active lists the ones to keep (nil: all of
// r.listings, fixed) and the rates are for 1.5 times the size it has now,
// so a set that grew by half is still refreshed in time.
func (r *Run) startKeepers(parent context.Context, active *activeSet) *keepers {
	ctx, cancel := context.WithCancel(parent)
	k := &keepers{cancel: cancel}
	n := len(r.listings)
	pick := func(cursor uint64) (int, bool) { return int(cursor % uint64(n)), true }
	size := float64(n)
	if active != nil {
		pick, size = active.at, 1.5*float64(active.len())
	}
	if size == 0 {
		return k
	}
	var pcur, rcur atomic.Uint64
	pres := r.cfg.Rates[KindPresence]
	if min := size / r.cfg.PresenceEvery.Seconds(); pres < min {
		pres = min
	}
	renew := r.cfg.Rates[KindRenew]
	if min := size / r.cfg.RenewEvery.Seconds(); renew < min {
		renew = min
	}
	streams := []Stream{
		{Kind: KindPresence, Rate: pres, Workers: 2, Do: func(ctx context.Context, intended time.Time) {
			if i, ok := pick(pcur.Add(1) - 1); ok {
				r.sendPresence(i, intended)
			}
		}},
		{Kind: KindRenew, Rate: renew, Workers: max(2, r.cfg.Conns/4), Do: func(ctx context.Context, intended time.Time) {
			if i, ok := pick(rcur.Add(1) - 1); ok {
				r.renew(i, intended)
			}
		}},
	}
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		RunOpenLoop(ctx, streams, 24*time.Hour, &r.rec)
	}()
	return k
}

func (k *keepers) stop() {
	k.cancel()
	k.wg.Wait()
}

// renew renews listing i's lease at its last known version.
func (r *Run) renew(i int, intended time.Time) {
	h := r.heldAt(i)
	// One renewal of a listing at a time, so each sends the version the
	// previous one got back (a stale one would get 409, an error), and
	// none is sent after the soak deleted the listing.
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deleted.Load() {
		return
	}
	lease := h.Lease
	lease.Version = h.version.Load()
	code := classify(r.api.pubs[h.Pub].RenewLease(r.ctx, h.ID, &lease, -1))
	if code == CodeOK {
		h.version.Store(lease.Version)
	}
	r.rec.Load().Observe(KindRenew, code, time.Since(intended))
}
