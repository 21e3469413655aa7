package main

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// runLoad holds cfg.Listings listings with live presence and renewed leases
// (the publishers), then offers the configured open-loop rates of browse,
// get, create and join (each admitted join completes both UDP binds and the
// introduction, as a joiner and its host would) for cfg.Duration.
func runLoad(ctx context.Context, r *Run, res *Result) error {
	cfg := r.cfg
	fill, err := r.setupFill(ctx, res, cfg.Listings)
	if err != nil {
		return err
	}
	if u, err := r.serverUsage(); err == nil {
		fill.UsageAtFull = &u
		fill.RSSMiB = float64(u.RSSBytes) / (1 << 20)
	}
	keep := r.startKeepers(ctx)
	defer keep.stop()
	live := r.liveIndexes()
	np, nc := len(r.tok.Publishers), len(r.tok.Clients)
	var ccur, jcur atomic.Uint64
	streams := []Stream{
		{Kind: KindCreate, Rate: cfg.Rates[KindCreate], Ramp: cfg.Ramp, Workers: cfg.Conns / 4, Do: func(ctx context.Context, intended time.Time) {
			n := int(ccur.Add(1))
			_, err := r.api.pubs[n%np].CreateListing(r.ctx, r.idemKey("load"), listingSpec(n, cfg.Region, cfg.ProtoVer))
			r.rec.Load().Observe(KindCreate, classify(err), time.Since(intended))
		}},
		{Kind: KindBrowse, Rate: cfg.Rates[KindBrowse], Ramp: cfg.Ramp, Workers: cfg.Conns / 4, Do: func(ctx context.Context, intended time.Time) {
			after := ""
			if len(live) > 0 && rand.IntN(2) == 0 {
				after = r.listings[live[rand.IntN(len(live))]].ID.String()
			}
			_, _, err := r.api.clients[rand.IntN(nc)].BrowsePage(r.ctx, client.BrowseQuery{ProtocolVersion: cfg.ProtoVer, PageSize: 50}, after)
			r.rec.Load().Observe(KindBrowse, classify(err), time.Since(intended))
		}},
	}
	if len(live) > 0 {
		streams = append(streams,
			Stream{Kind: KindGet, Rate: cfg.Rates[KindGet], Ramp: cfg.Ramp, Workers: cfg.Conns / 4, Do: func(ctx context.Context, intended time.Time) {
				h := r.listings[live[rand.IntN(len(live))]]
				_, err := r.api.clients[rand.IntN(nc)].GetListing(r.ctx, h.ID)
				r.rec.Load().Observe(KindGet, classify(err), time.Since(intended))
			}},
			Stream{Kind: KindJoin, Rate: cfg.Rates[KindJoin], Ramp: cfg.Ramp, Workers: cfg.Conns / 4, Do: func(ctx context.Context, intended time.Time) {
				n := int(jcur.Add(1))
				if code, a := r.join(live[rand.IntN(len(live))], n%nc, intended, true); code == CodeOK {
					r.bindAttempt(a, time.Now())
				}
			}})
	}
	cpu0, cpuErr := r.serverUsage()
	r.phase("load", func() error {
		RunOpenLoop(ctx, streams, cfg.Duration, &r.rec)
		r.waitUDP(ctx)
		return nil
	})
	cpu1, cpuErr2 := r.serverUsage()
	var c Counts
	r.phaseRecs["load"].Load(&c)
	var total, errs, answers uint64
	for k := Kind(0); k < numKinds; k++ {
		total += c.Total(k)
		errs += c.Class(k, ClassError)
		answers += c.Answered(k)
	}
	if cpuErr == nil && cpuErr2 == nil {
		res.ServerCPU = cpuSummary("load", cpu1.CPUSeconds-cpu0.CPUSeconds, answers)
	}
	add := res.addCheck
	add("setup.listings", fill.Listings.Admitted == cfg.Listings, "%d of %d listings admitted (%d shed, %d failed)",
		fill.Listings.Admitted, cfg.Listings, fill.Listings.Shed, fill.Listings.Failed)
	add("setup.presence", fill.Presence.Admitted == fill.Listings.Admitted, "%d of %d presence bindings live",
		fill.Presence.Admitted, fill.Listings.Admitted)
	rate := 0.0
	if total > 0 {
		rate = float64(errs) / float64(total)
	}
	add("load.errors", rate <= cfg.MaxErrorRate, "%d errors in %d requests (%.4f%%, limit %.4f%%)", errs, total, 100*rate, 100*cfg.MaxErrorRate)
	binds := c.Class(KindBind, ClassOK)
	add("load.introductions", r.introduces.Load() >= binds-binds/100, "%d INTRODUCE indications for %d successful binds (2 per attempt)",
		r.introduces.Load(), binds)
	return nil
}
