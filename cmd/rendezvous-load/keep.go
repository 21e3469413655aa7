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

func (r *Run) startKeepers(parent context.Context) *keepers {
	ctx, cancel := context.WithCancel(parent)
	k := &keepers{cancel: cancel}
	n := len(r.listings)
	if n == 0 {
		return k
	}
	var pcur, rcur atomic.Uint64
	pres := r.cfg.Rates[KindPresence]
	if min := float64(n) / r.cfg.PresenceEvery.Seconds(); pres < min {
		pres = min
	}
	renew := r.cfg.Rates[KindRenew]
	if min := float64(n) / r.cfg.RenewEvery.Seconds(); renew < min {
		renew = min
	}
	streams := []Stream{
		{Kind: KindPresence, Rate: pres, Workers: 2, Do: func(ctx context.Context, intended time.Time) {
			r.sendPresence(int(pcur.Add(1)-1)%n, intended)
		}},
		{Kind: KindRenew, Rate: renew, Workers: max(2, r.cfg.Conns/4), Do: func(ctx context.Context, intended time.Time) {
			r.renew(int(rcur.Add(1)-1)%n, intended)
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
	h := r.listings[i]
	// A copy: renewals of one listing may overlap, and the atomic version
	// is the one shared value (a stale one gets 409, counted as an error).
	lease := h.Lease
	lease.Version = h.version.Load()
	code := classify(r.api.pubs[h.Pub].RenewLease(r.ctx, h.ID, &lease, -1))
	if code == CodeOK {
		h.version.Store(lease.Version)
	}
	r.rec.Load().Observe(KindRenew, code, time.Since(intended))
}
