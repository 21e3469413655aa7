package main

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
)

// runLoad holds cfg.Listings listings with live presence and renewed leases
// (the publishers), then offers the configured open-loop rates of every kind
// for cfg.Duration (each admitted join completes both UDP binds and the
// introduction, as a joiner and its host would), then, with --cpu-steps,
// measures the server's CPU per answer of each kind at rising rates.
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
	keep := r.startKeepers(ctx, nil)
	defer keep.stop()
	live := r.liveIndexes()
	streams := r.trafficStreams(live, &cfg.Rates, nil)
	for i := range streams {
		streams[i].Ramp = cfg.Ramp
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
	var answers uint64
	for k := Kind(0); k < numKinds; k++ {
		answers += c.Answered(k)
	}
	if cpuErr == nil && cpuErr2 == nil {
		res.ServerCPU = cpuSummary("load", cpu1.CPUSeconds-cpu0.CPUSeconds, answers)
	}
	add := res.addCheck
	add("setup.listings", fill.Listings.Admitted == cfg.Listings, "%d of %d listings admitted (%d shed, %d failed); %s",
		fill.Listings.Admitted, cfg.Listings, fill.Listings.Shed, fill.Listings.Failed, fill.Listings.refusals())
	add("setup.presence", fill.Presence.Admitted == fill.Listings.Admitted, "%d of %d presence bindings live",
		fill.Presence.Admitted, fill.Listings.Admitted)
	r.errorCheck(res, "load.errors", &c)
	r.filterChecks(res, &c)
	binds := c.Class(KindBind, ClassOK)
	if binds == 0 {
		res.skipCheck("load.introductions", "no bind succeeded, so no introduction was due (%d binds sent; offer join to test introductions)", c.Total(KindBind))
	} else {
		add("load.introductions", r.introduces.Load() >= binds-binds/100, "%d INTRODUCE indications for %d successful binds (2 per attempt)",
			r.introduces.Load(), binds)
	}
	if cfg.CPUSteps > 0 && ctx.Err() == nil {
		r.cpuLadder(ctx, res, live)
	}
	return nil
}

// errorCheck adds the check that errors stay within --max-error-rate of
// all requests counted in c; with no request at all it is skipped.
func (r *Run) errorCheck(res *Result, name string, c *Counts) {
	var total, errs uint64
	for k := Kind(0); k < numKinds; k++ {
		total += c.Total(k)
		errs += c.Class(k, ClassError)
	}
	if total == 0 {
		res.skipCheck(name, "no request was sent")
		return
	}
	rate := float64(errs) / float64(total)
	res.addCheck(name, rate <= r.cfg.MaxErrorRate, "%d errors in %d requests (%.4f%%, limit %.4f%%)", errs, total, 100*rate, 100*r.cfg.MaxErrorRate)
}

// trafficStreams are the open-loop streams of the measured traffic at
// rates: browse and get over live listings, joins (each admitted one bound
// by both peers), re-binds of recent attempts, plain Bindings, creates and
// deletes. Presence and renew come from the keepers. With churn nil
// (load mode) a created listing is only noted for the cleanup and a delete
// removes the latest such one; in soak mode (churn set) a created listing
// is held (presence and renewals) and a delete removes a random one of
// them.
func (r *Run) trafficStreams(live []int, rates *RateSet, churn *soakChurn) []Stream {
	cfg := r.cfg
	np, nc := len(r.tok.Publishers), len(r.tok.Clients)
	var ccur, jcur, pcur atomic.Uint64
	workers := max(1, cfg.Conns/4)
	streams := []Stream{
		{Kind: KindCreate, Rate: rates[KindCreate], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			n := int(ccur.Add(1))
			pub := n % np
			cl, err := r.api.pubs[pub].CreateListing(r.ctx, r.idemKey("load"), listingSpec(n, cfg.Region, cfg.ProtoVer))
			code := classify(err)
			r.rec.Load().Observe(KindCreate, code, time.Since(intended))
			if code != CodeOK {
				return
			}
			if churn != nil {
				churn.hold(cl, pub)
			} else {
				r.noteCreated(cl, pub)
			}
		}},
		{Kind: KindDelete, Rate: rates[KindDelete], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			if churn != nil {
				churn.deleteOne(intended)
			} else {
				r.deleteCreated(intended)
			}
		}},
		{Kind: KindBrowse, Rate: rates[KindBrowse], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			after := ""
			if len(live) > 0 && rand.IntN(2) == 0 {
				after = r.heldAt(live[rand.IntN(len(live))]).ID.String()
			}
			_, _, err := r.api.clients[rand.IntN(nc)].BrowsePage(r.ctx, client.BrowseQuery{ProtocolVersion: cfg.ProtoVer, PageSize: 50}, after)
			r.rec.Load().Observe(KindBrowse, classify(err), time.Since(intended))
		}},
		{Kind: KindLivez, Rate: rates[KindLivez], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			r.rec.Load().Observe(KindLivez, r.api.livez(r.ctx), time.Since(intended))
		}},
		{Kind: KindPlain, Rate: rates[KindPlain], Workers: 2, Do: func(ctx context.Context, intended time.Time) {
			if err := r.udp[pcur.Add(1)%uint64(len(r.udp))].SendPlain(-1, intended); err != nil {
				r.rec.Load().Observe(KindPlain, CodeTransport, 0)
			}
		}},
	}
	if len(live) == 0 {
		return streams
	}
	streams = append(streams, r.filterStreams(live, rates, workers)...)
	return append(streams,
		Stream{Kind: KindGet, Rate: rates[KindGet], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			h := r.heldAt(live[rand.IntN(len(live))])
			_, err := r.api.clients[rand.IntN(nc)].GetListing(r.ctx, h.ID)
			r.rec.Load().Observe(KindGet, classify(err), time.Since(intended))
		}},
		Stream{Kind: KindJoin, Rate: rates[KindJoin], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			n := int(jcur.Add(1))
			if code, a, _ := r.join(live[rand.IntN(len(live))], n%nc, intended, true); code == CodeOK {
				r.bindAttempt(a, time.Now())
			}
		}},
		// Each re-bind sends both peers' binds again from their sockets: an
		// idempotent success while the attempt lives (docs/contracts/udp.md#attempt-bind).
		Stream{Kind: KindBind, Rate: rates[KindBind] / 2, Workers: 2, Do: func(ctx context.Context, intended time.Time) {
			if a, ok := r.recentAttempt(intended); ok {
				r.bindAttempt(a, intended)
			}
		}})
}

// recentAttempt picks one of the latest attempts that has lived less than
// half the attempt TTL at now, so it is still there when its binds arrive.
func (r *Run) recentAttempt(now time.Time) (int, bool) {
	r.attMu.Lock()
	defer r.attMu.Unlock()
	n := len(r.attempts)
	if n == 0 {
		return 0, false
	}
	a := n - 1 - rand.IntN(min(n, 64))
	return a, now.Sub(r.attempts[a].At) < r.cfg.AttemptTTL/2
}

// deleteCreated deletes the listing load mode's create stream made last
// (nothing when there is none left).
func (r *Run) deleteCreated(intended time.Time) {
	r.extraMu.Lock()
	if len(r.extra) == 0 {
		r.extraMu.Unlock()
		return
	}
	c := r.extra[len(r.extra)-1]
	r.extra = r.extra[:len(r.extra)-1]
	r.extraMu.Unlock()
	code := classify(r.api.pubs[c.Pub].DeleteListing(r.ctx, c.ListingID, &c.Lease))
	r.rec.Load().Observe(KindDelete, code, time.Since(intended))
	if code != CodeOK && code != CodeNotFound && code != CodeExpired {
		r.extraMu.Lock()
		r.extra = append(r.extra, c) // still there: the cleanup tries again
		r.extraMu.Unlock()
	}
}
