package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/internal/loadresult"
)

// The overload phase ends overloadMargin before the first filled attempt
// could expire (cfg.AttemptTTL after it was requested), so every join
// admitted during overload would be a ceiling breach, not a freed slot.
//
// overloadMargin is kept between the end of the overload phase and the
// first possible attempt expiry.
const overloadMargin = 3 * time.Second

// runShed fills every pool to its ceiling through the real APIs, offers
// overload at cfg.Overload times each ceiling, and validates typed shedding
// and zero eviction.
func runShed(ctx context.Context, r *Run, res *Result) error {
	cfg := r.cfg
	if r.api.op == nil {
		return &ConfigError{"operator", "shed mode reads the ceilings from /v1/admin/stats and needs an operator token"}
	}
	st, err := r.api.op.Stats(ctx)
	if err != nil {
		return fmt.Errorf("cannot read the ceilings: %w", err)
	}
	pool := func(name string) client.PoolStat {
		return st.Pools[name]
	}
	res.Ceilings = map[string]int{}
	for name, p := range st.Pools {
		res.Ceilings[name] = p.Ceiling
	}
	lp, pp, ap := pool("listings"), pool("presence"), pool("attempts")
	if lp.Ceiling == 0 || ap.Ceiling == 0 {
		return fmt.Errorf("/v1/admin/stats names no listings or attempts ceiling")
	}
	wantL, wantA := lp.Ceiling-lp.Used, ap.Ceiling-ap.Used
	if wantL <= 0 || wantA <= 0 {
		return fmt.Errorf("the server is already full (listings %d/%d, attempts %d/%d): shed mode needs room to fill", lp.Used, lp.Ceiling, ap.Used, ap.Ceiling)
	}
	if err := r.preflight(ctx, wantL, wantA); err != nil {
		return err
	}
	fill := &FillSummary{}
	res.Fill = fill
	t0 := time.Now()
	if err := r.phase("fill-listings", func() error {
		fill.Listings, err = r.fillListings(ctx, wantL)
		return err
	}); err != nil {
		return err
	}
	if len(r.listings) == 0 {
		return fmt.Errorf("no listing was admitted during the fill")
	}
	r.phase("fill-presence", func() error { fill.Presence = r.fillPresence(ctx); return nil })
	keep := r.startKeepers(ctx, nil)
	defer keep.stop()
	var attemptsStart time.Time
	r.phase("fill-attempts", func() error {
		attemptsStart = time.Now()
		fill.Attempts = r.fillAttempts(ctx, wantA)
		return nil
	})
	fill.TotalSeconds = time.Since(t0).Seconds()
	filled := time.Now()
	if u, err := r.serverUsage(); err == nil {
		fill.UsageAtFull = &u
		fill.RSSMiB = float64(u.RSSBytes) / (1 << 20)
	} else {
		fmt.Fprintf(r.out, "warning: server RSS not available: %v\n", err)
	}
	st2 := r.statsSince(ctx, filled)

	// Overload: offered over-ceiling work plus accepted work, open loop.
	d := cfg.Duration
	if limit := time.Until(attemptsStart.Add(cfg.AttemptTTL - overloadMargin)); d > limit {
		d = limit
	}
	if d < time.Second {
		return fmt.Errorf("filling attempts took too long: no time is left to overload before the first attempt could expire")
	}
	extra := cfg.Overload - 1
	sh := &loadresult.Shed{Overload: cfg.Overload, Admitted: len(r.listings), AdmittedAttempts: r.attemptCount()}
	res.Shed = sh
	live := r.liveIndexes()
	planned := uint64(extra*float64(lp.Ceiling)) + uint64(extra*float64(ap.Ceiling))
	sh.Planned = planned
	var lostSampled, sampled atomic.Uint64
	var bcur atomic.Uint64
	bindRate := cfg.Rates[KindBind]
	if bindRate == 0 {
		bindRate = 100
	}
	browseRate := cfg.Rates[KindBrowse]
	if browseRate == 0 {
		browseRate = 20
	}
	np, nc := len(r.tok.Publishers), len(r.tok.Clients)
	var ccur, jcur atomic.Uint64
	streams := []Stream{
		{Kind: KindCreate, Rate: extra * float64(lp.Ceiling) / d.Seconds(), Workers: cfg.Conns / 2, Do: func(ctx context.Context, intended time.Time) {
			n := int(ccur.Add(1))
			sent := time.Now()
			cl, err := r.api.pubs[n%np].CreateListing(r.ctx, r.idemKey("over"), listingSpec(n, cfg.Region, cfg.ProtoVer))
			code := classify(err)
			if code == CodeOK {
				r.noteCreated(cl, n%np) // a breach, failed below; still removed at the end
			}
			rec := r.rec.Load()
			rec.Observe(KindCreate, code, time.Since(intended))
			rec.ObserveService(KindCreate, code, time.Since(sent))
		}},
		{Kind: KindJoin, Rate: extra * float64(ap.Ceiling) / d.Seconds(), Workers: cfg.Conns / 4, Do: func(ctx context.Context, intended time.Time) {
			n := int(jcur.Add(1))
			r.join(live[rand.IntN(len(live))], n%nc, intended, false)
		}},
		{Kind: KindGet, Rate: cfg.SampleRate, Workers: 8, Do: func(ctx context.Context, intended time.Time) {
			h := r.listings[live[rand.IntN(len(live))]]
			_, err := r.api.clients[0].GetListing(r.ctx, h.ID)
			code := classify(err)
			sampled.Add(1)
			if code != CodeOK {
				lostSampled.Add(1)
			}
			r.rec.Load().Observe(KindGet, code, time.Since(intended))
		}},
		{Kind: KindBrowse, Rate: browseRate, Workers: 4, Do: func(ctx context.Context, intended time.Time) {
			_, _, err := r.api.clients[0].BrowsePage(r.ctx, client.BrowseQuery{ProtocolVersion: cfg.ProtoVer, PageSize: 100}, "")
			r.rec.Load().Observe(KindBrowse, classify(err), time.Since(intended))
		}},
		{Kind: KindBind, Rate: bindRate / 2, Workers: 2, Do: func(ctx context.Context, intended time.Time) {
			if a := int(bcur.Add(1) - 1); a < r.attemptCount() {
				r.bindAttempt(a, intended)
			}
		}},
	}
	cpu0, cpuErr := r.serverUsage()
	po0, pos0 := r.presOver.Load(), r.presOverShed.Load()
	r.phase("overload", func() error {
		RunOpenLoop(ctx, streams, d, &r.rec)
		r.waitUDP(ctx)
		return nil
	})
	cpu1, cpuErr2 := r.serverUsage()
	presOver, presOverShed := r.presOver.Load()-po0, r.presOverShed.Load()-pos0
	over := r.phaseRecs["overload"]
	var oc Counts
	over.Load(&oc)
	if cpuErr == nil && cpuErr2 == nil {
		var answers uint64
		for k := Kind(0); k < numKinds; k++ {
			answers += oc.Answered(k)
		}
		res.ServerCPU = cpuSummary("overload", cpu1.CPUSeconds-cpu0.CPUSeconds, answers)
	}

	// Verify: enumerate every visible listing and compare with the admitted set.
	var enumerated map[client.ListingID]bool
	var enumErr error
	r.phase("verify", func() error {
		enumerated, enumErr = r.enumerate(ctx)
		return nil
	})
	st3 := r.statsSince(ctx, time.Now())

	sh.OfferedOverCeiling = oc.Total(KindCreate) + oc.Total(KindJoin) + presOver
	sh.TypedShed = oc.Class(KindCreate, ClassShed) + oc.Class(KindJoin, ClassShed) + presOverShed
	sh.Untyped = sh.OfferedOverCeiling - sh.TypedShed
	if sh.OfferedOverCeiling > 0 {
		sh.TypedPct = 100 * float64(sh.TypedShed) / float64(sh.OfferedOverCeiling)
	}
	// Shed latency, two ways: open loop (from each request's intended start,
	// so it includes any wait in the generator) and the server's answer
	// time (from sending). The check uses the answer time for the HTTP
	// sheds and the open-loop figure for STUN 508 (UDP answers are timed
	// from their send already, batching aside).
	var shedH, svcH, tmp HistSnapshot
	for _, k := range []Kind{KindCreate, KindJoin, KindPresence} {
		over.KindHist(k, ClassShed, false, &tmp)
		shedH.Add(&tmp)
	}
	for _, k := range []Kind{KindCreate, KindJoin} {
		over.ServiceHist(k, ClassShed, &tmp)
		svcH.Add(&tmp)
	}
	over.KindHist(KindPresence, ClassShed, false, &tmp)
	svcH.Add(&tmp)
	sh.ShedP50ms, sh.ShedP99ms, sh.ShedMaxMs = ms(shedH.Quantile(.5)), ms(shedH.Quantile(.99)), ms(shedH.Max())
	sh.AnswerP50ms, sh.AnswerP99ms, sh.AnswerMaxMs = ms(svcH.Quantile(.5)), ms(svcH.Quantile(.99)), ms(svcH.Max())
	sh.Sampled, sh.LostSampled = sampled.Load(), lostSampled.Load()
	sh.Enumerated = len(enumerated)
	for _, i := range live {
		if !enumerated[r.listings[i].ID] {
			sh.LostEnumerated++
		}
	}
	sh.Lost = sh.LostEnumerated
	for _, k := range []Kind{KindPresence, KindRenew, KindGet, KindBrowse, KindBind} {
		sh.AcceptedFailed += oc.Class(k, ClassError) + oc.Class(k, ClassShed) - oc.ByCode[k][CodeTimeout]
		sh.AcceptedTimeouts += oc.ByCode[k][CodeTimeout]
	}
	sh.AcceptedFailed -= presOver // answered presence of never-admitted listings is over-ceiling work
	sh.Introductions = r.introduces.Load()

	// Checks, each naming what it saw.
	add := res.addCheck
	add("fill.listings", fill.Listings.Admitted == wantL, "%d of %d listings admitted (%d shed, %d failed) in %.1fs; %s",
		fill.Listings.Admitted, wantL, fill.Listings.Shed, fill.Listings.Failed, fill.Listings.Seconds, fill.Listings.refusals())
	wantP := min(len(r.listings), pp.Ceiling-pp.Used)
	add("fill.presence", fill.Presence.Admitted == wantP && fill.Presence.Failed == 0,
		"%d of %d presence bindings live (%d shed with STUN 508, %d failed) in %.1fs",
		fill.Presence.Admitted, wantP, fill.Presence.Shed, fill.Presence.Failed, fill.Presence.Seconds)
	add("fill.attempts", fill.Attempts.Admitted == wantA, "%d of %d attempts admitted (%d shed, %d failed) in %.1fs; %s",
		fill.Attempts.Admitted, wantA, fill.Attempts.Shed, fill.Attempts.Failed, fill.Attempts.Seconds, fill.Attempts.refusals())
	add("fill.pools_full", st2.Pools["listings"].Used == lp.Ceiling && st2.Pools["attempts"].Used == ap.Ceiling,
		"stats after fill: %s", poolsLine(st2))
	sent := oc.Total(KindCreate) + oc.Total(KindJoin)
	sentPct := 0.0
	if planned > 0 {
		sentPct = 100 * float64(sent) / float64(planned)
	}
	add("overload.offered", sentPct >= 100*cfg.MinOffered, "%d of %d planned over-ceiling creates and joins sent (%.1f%%, at least %.0f%% required) in %.1fs",
		sent, planned, sentPct, 100*cfg.MinOffered, d.Seconds())
	// A quota's 429 is typed, but it is not the ceiling shedding: with the
	// pools full, an over-ceiling request refused by a quota proves nothing
	// about the ceiling (the quota stopped it first), so it fails the check.
	byQuota := oc.ByCode[KindCreate][CodeQuota] + oc.ByCode[KindJoin][CodeQuota]
	quotaNote := ""
	if byQuota > 0 {
		quotaNote = fmt.Sprintf("; %d refused by a policy quota (quota_exceeded), not by the ceiling: raise the server's tenant, owner and subject quotas to the pools (--tenant-listing-quota, --tenant-attempt-quota, --subject-attempt-quota, --owner-listing-quota)", byQuota)
	}
	add("shed.typed", sh.OfferedOverCeiling > 0 && sh.Untyped == 0 && byQuota == 0,
		"%d of %d over-ceiling requests got a typed shed answer (%.3f%%); create %v, join %v, presence over its ceiling %d (%d STUN 508)%s",
		sh.TypedShed, sh.OfferedOverCeiling, sh.TypedPct, codesOf(&oc, KindCreate), codesOf(&oc, KindJoin), presOver, presOverShed, quotaNote)
	limit := "report only"
	if cfg.ShedP99 > 0 {
		limit = "limit " + cfg.ShedP99.String()
	}
	add("shed.p99", sh.TypedShed > 0 && (cfg.ShedP99 == 0 || svcH.Quantile(.99) < cfg.ShedP99),
		"shed answer time p50 %.3f ms, p99 %.3f ms (%s), max %.3f ms; open-loop from intended start p50 %.3f ms, p99 %.3f ms",
		sh.AnswerP50ms, sh.AnswerP99ms, limit, sh.AnswerMaxMs, sh.ShedP50ms, sh.ShedP99ms)
	add("accepted.succeed", sh.AcceptedFailed == 0 && sh.AcceptedTimeouts*1000 <= oc.Total(KindPresence)+oc.Total(KindBind)+1,
		"accepted work during overload: %d failed, %d timed out (presence %v, renew %v, get %v, browse %v, bind %v)",
		sh.AcceptedFailed, sh.AcceptedTimeouts, codesOf(&oc, KindPresence), codesOf(&oc, KindRenew),
		codesOf(&oc, KindGet), codesOf(&oc, KindBrowse), codesOf(&oc, KindBind))
	add("evict.sampled", sh.LostSampled == 0 && sh.Sampled > 0, "%d of %d sampled GETs of admitted listings failed", sh.LostSampled, sh.Sampled)
	if enumErr != nil {
		add("evict.enumerated", false, "enumeration failed: %v", enumErr)
	} else {
		add("evict.enumerated", sh.LostEnumerated == 0, "%d of %d live admitted listings missing from the full enumeration (%d listed)",
			sh.LostEnumerated, len(live), sh.Enumerated)
	}
	add("evict.stats", st3.Pools["listings"].Used == lp.Ceiling, "stats after overload: %s", poolsLine(st3))
	if cfg.MaxRSSMiB > 0 {
		add("server.rss", fill.UsageAtFull != nil && fill.RSSMiB <= float64(cfg.MaxRSSMiB),
			"server RSS at full fill %.1f MiB (limit %d MiB)", fill.RSSMiB, cfg.MaxRSSMiB)
	}
	return nil
}

// stats reads the operator stats for a check; on error the pools are empty,
// which fails the check that reads them and names "stats unavailable".
func (r *Run) stats(ctx context.Context) *client.AdminStats {
	st, err := r.api.op.Stats(ctx)
	if err != nil {
		return &client.AdminStats{}
	}
	return st
}

// statsSince reads the operator stats until their figures were read from
// the store after since (the server shares one read a second between its
// readers, docs/contracts/http.md), for at most 3 s.
func (r *Run) statsSince(ctx context.Context, since time.Time) *client.AdminStats {
	giveUp := time.Now().Add(3 * time.Second)
	for {
		st := r.stats(ctx)
		readAt := time.Now().Add(-time.Duration(st.AgeMS) * time.Millisecond)
		if readAt.After(since) || time.Now().After(giveUp) || ctx.Err() != nil {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// poolsLine renders the pools of a stats answer as "name used/ceiling, ...".
func poolsLine(st *client.AdminStats) string {
	s := ""
	for _, name := range []string{"listings", "presence", "attempts", "idempotency", "replay", "revocations"} {
		if p, ok := st.Pools[name]; ok {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%s %d/%d", name, p.Used, p.Ceiling)
		}
	}
	if s == "" {
		return "no pools (stats unavailable)"
	}
	return s
}

// codesOf renders kind k's non-zero codes as "code=n ...".
func codesOf(c *Counts, k Kind) string {
	s := ""
	for i, v := range c.ByCode[k] {
		if v > 0 {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%s=%d", Code(i), v)
		}
	}
	if s == "" {
		return "none"
	}
	return "[" + s + "]"
}

func cpuSummary(phase string, cpu float64, answers uint64) *CPUSummary {
	c := &CPUSummary{Phase: phase, CPUSeconds: cpu, Answers: answers}
	if answers > 0 {
		c.MicrosPerAns = cpu * 1e6 / float64(answers)
	}
	return c
}

// enumerate walks every browse page (at most 100 items each) and returns
// the set of listed IDs.
func (r *Run) enumerate(ctx context.Context) (map[client.ListingID]bool, error) {
	seen := map[client.ListingID]bool{}
	q := client.BrowseQuery{ProtocolVersion: r.cfg.ProtoVer, PageSize: 100}
	after := ""
	for pages := 0; ctx.Err() == nil; pages++ {
		if pages > 1+len(r.listings)/100*4+1000 {
			return seen, fmt.Errorf("browse did not end after %d pages", pages)
		}
		t := time.Now()
		items, next, err := r.api.clients[0].BrowsePage(ctx, q, after)
		code := classify(err)
		r.rec.Load().Observe(KindBrowse, code, time.Since(t))
		if code != CodeOK {
			return seen, fmt.Errorf("browse page %d (%s): %w", pages, code, err)
		}
		for _, it := range items {
			seen[it.ListingID] = true // the SDK refuses a page with a malformed listing_id
		}
		if next == "" {
			return seen, nil
		}
		if next == after {
			return seen, fmt.Errorf("browse cursor did not advance at page %d", pages)
		}
		after = next
	}
	return seen, ctx.Err()
}
