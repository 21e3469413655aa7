package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/flood"
)

// Fair shares with any number of tenants (docs/contracts/semantics.md#quotas):
// two tenants flood the listing, attempt and idempotency pools at ten times
// their size, each request from a new principal (so only the tenant shares
// can stop them), from several goroutines; the other tenants, each holding
// a listing from before the flood, keep creating listings and joining while
// it lasts, each within what the pools keep free for them. Before fair
// shares, the two flooders took half of each pool each and every other
// tenant's first creation got 503.
const (
	fairFlooders        = 2
	fairOverload        = 10
	fairFloodWorkers    = 8
	fairVictimListings  = 2 // new listings per victim tenant during the flood
	fairVictimJoins     = 4 // joins per victim tenant during the flood
	fairVictimMinPct    = 99
	fairSaturatedRefusd = 20 // refusals of each flooder before the victims start
)

func fairLimits(l *engine.Limits) {
	l.MaxListings, l.MaxAttempts, l.MaxIdempotency = 200, 200, 400
	*l = l.DefaultShares()
}

func fairTenant(i int) engine.Tenant {
	return engine.Tenant{Game: fmt.Sprintf("fair-%d", i), Env: "test"}
}

func runFairShares(t *testing.T, f Factory, tenants int) {
	e := newEnv(t, f, fairLimits)
	// Every tenant holds a visible listing before the flood; every command
	// is built before the race (the env is not goroutine-safe).
	home := make([]engine.ListingView, tenants)
	for i := range home {
		c := e.listingCmd(engine.Subject(fmt.Sprintf("home-publisher-%d", i)))
		c.Tenant = fairTenant(i)
		home[i] = e.create(c)
		e.presence(home[i], 1, pub(uint16(41000+i)))
	}
	offered := fairOverload * (e.l.MaxListings + e.l.MaxAttempts)
	type call func() engine.Result
	floods := make([][]call, fairFlooders)
	for fl := range floods {
		for i := 0; i < offered/2; i++ {
			lc := e.listingCmd(engine.Subject(fmt.Sprintf("flood-%d-publisher-%d", fl, i)))
			lc.Tenant = fairTenant(fl)
			jc := e.attemptCmd(home[fl], engine.Subject(fmt.Sprintf("flood-%d-client-%d", fl, i)))
			floods[fl] = append(floods[fl],
				func() engine.Result { _, r, err := e.s.CreateListing(e.ctx, lc); return mustNoErr(t, r, err) },
				func() engine.Result { _, r, err := e.s.CreateJoinAttempt(e.ctx, jc); return mustNoErr(t, r, err) })
		}
	}
	victims := make([][]call, tenants-fairFlooders)
	for vi := range victims {
		ti := fairFlooders + vi
		for i := 0; i < fairVictimListings; i++ {
			lc := e.listingCmd(engine.Subject(fmt.Sprintf("victim-%d-publisher-%d", ti, i)))
			lc.Tenant = fairTenant(ti)
			victims[vi] = append(victims[vi], func() engine.Result { _, r, err := e.s.CreateListing(e.ctx, lc); return mustNoErr(t, r, err) })
		}
		for i := 0; i < fairVictimJoins; i++ {
			jc := e.attemptCmd(home[ti], engine.Subject(fmt.Sprintf("victim-%d-client-%d", ti, i)))
			victims[vi] = append(victims[vi], func() engine.Result { _, r, err := e.s.CreateJoinAttempt(e.ctx, jc); return mustNoErr(t, r, err) })
		}
	}

	// Each flooder is saturated once it has been refused a few times; the
	// victims start when both are, and the flood goes on meanwhile.
	var admitted, shedQuota, shedPool atomic.Int64
	refused := make([]atomic.Int64, fairFlooders)
	fd := flood.New()
	for fl := range floods {
		fd.Go(fairFloodWorkers/fairFlooders, int64(len(floods[fl])), func(i int64) {
			switch r := floods[fl][i](); {
			case r.OK():
				admitted.Add(1)
			case r.Quota():
				shedQuota.Add(1)
				if refused[fl].Add(1) == fairSaturatedRefusd && refused[1-fl].Load() >= fairSaturatedRefusd {
					fd.Saturate()
				}
			default:
				shedPool.Add(1)
			}
		})
	}
	<-fd.Saturated()
	var ok, work atomic.Int64
	var failures sync.Map
	var vw sync.WaitGroup
	for vi := range victims {
		vw.Add(1)
		go func() {
			defer vw.Done()
			for _, c := range victims[vi] {
				work.Add(1)
				if r := c(); r.OK() {
					ok.Add(1)
				} else {
					failures.Store(fmt.Sprintf("tenant %d: %v", fairFlooders+vi, r), true)
				}
			}
		}()
	}
	vw.Wait()
	fd.Wait()

	pct := 100 * float64(ok.Load()) / float64(work.Load())
	t.Logf("fair shares, %d tenants: victims %d/%d creations and joins succeeded (%.1f%%) while %d tenants offered %d each (%dx the pools): %d admitted, %d shed by their shares, %d by a pool",
		tenants, ok.Load(), work.Load(), pct, fairFlooders, offered, fairOverload, admitted.Load(), shedQuota.Load(), shedPool.Load())
	if pct < fairVictimMinPct {
		var fs []string
		failures.Range(func(k, _ any) bool { fs = append(fs, k.(string)); return true })
		t.Fatalf("victim tenants starved: %.1f%% succeeded, want at least %d%%; failures %v", pct, fairVictimMinPct, fs)
	}
	// The flooders are shed by their shares (429), never by a full pool.
	if shedPool.Load() != 0 {
		t.Fatalf("flooders shed %d times by a full pool: the pool filled", shedPool.Load())
	}
	e.check()
}
