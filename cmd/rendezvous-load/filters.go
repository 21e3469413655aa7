package main

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/rendezvous/rendezvous/client"
	"github.com/rendezvous/rendezvous/engine"
)

// Filtered browse and quick join (docs/contracts/semantics.md#filters-and-order,
// docs/contracts/semantics.md#quick-join). Every listing the load tester
// creates carries the indexed attributes mode (one of loadModes, by its
// number) and level, and 0..7 of 8 players, so a filter on mode keeps a
// third of the listings and none is full (a join of a full listing would be
// a refusal, not load).

var loadModes = [...]string{"coop", "pvp", "ctf"}

// loadMode is the mode of the n-th listing made.
func loadMode(n int) string { return loadModes[n%len(loadModes)] }

// listingAttributes are the n-th listing's attributes.
func listingAttributes(n int) client.Attributes {
	return client.Attributes{"mode": loadMode(n), "level": n % 20}
}

// filterQuery is "not full, mode = m, most players first", a server
// browser's common question.
func filterQuery(pv uint32, m string) client.BrowseQuery {
	return client.BrowseQuery{ProtocolVersion: pv, PageSize: 50}.NotFull().Where("mode", m).OrderBy("-current_players")
}

// filterStats counts what the filtered kinds saw that the contract rules
// out: an item that does not pass the page's filters or breaks its order,
// and a quick join that chose a listing of another mode.
type filterStats struct {
	pages, items, badItems atomic.Uint64
	quickOK, quickBad      atomic.Uint64
	// cursors holds, per mode, the next_cursor of the latest page, which
	// half the browses go on from.
	cursors [len(loadModes)]atomic.Pointer[string]
}

// filterStreams are the browse_filtered and quick_join streams at rates
// over the live listings: a quick join's attempt is bound by both peers
// like a join's, when it chose a listing the run holds.
func (r *Run) filterStreams(live []int, rates *RateSet, workers int) []Stream {
	cfg := r.cfg
	nc := len(r.tok.Clients)
	byID := make(map[client.ListingID]int, len(live))
	for _, li := range live {
		byID[r.heldAt(li).ID] = li
	}
	st := &r.filters
	return []Stream{
		{Kind: KindBrowseFiltered, Rate: rates[KindBrowseFiltered], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			mi := rand.IntN(len(loadModes))
			cursor := ""
			if c := st.cursors[mi].Load(); c != nil && rand.IntN(2) == 0 {
				cursor = *c
			}
			items, next, err := r.api.clients[rand.IntN(nc)].BrowsePage(r.ctx, filterQuery(cfg.ProtoVer, loadModes[mi]), cursor)
			code := classify(err)
			r.rec.Load().Observe(KindBrowseFiltered, code, time.Since(intended))
			if code != CodeOK {
				return
			}
			if next != "" {
				st.cursors[mi].Store(&next)
			} else {
				st.cursors[mi].Store(nil)
			}
			st.pages.Add(1)
			st.items.Add(uint64(len(items)))
			st.badItems.Add(uint64(misfits(items, loadModes[mi])))
		}},
		{Kind: KindQuickJoin, Rate: rates[KindQuickJoin], Workers: workers, Do: func(ctx context.Context, intended time.Time) {
			m := loadModes[rand.IntN(len(loadModes))]
			q := client.BrowseQuery{ProtocolVersion: cfg.ProtoVer}.NotFull().Where("mode", m)
			sent := time.Now()
			at, err := r.api.clients[rand.IntN(nc)].QuickJoin(r.ctx, r.idemKey("quick"), q, false)
			code := classify(err)
			rec := r.rec.Load()
			rec.Observe(KindQuickJoin, code, time.Since(intended))
			rec.ObserveService(KindQuickJoin, code, time.Since(sent))
			if code != CodeOK {
				return
			}
			li, ok := byID[at.ListingID]
			if !ok || r.heldAt(li).mode != m {
				st.quickBad.Add(1) // a listing the run did not make live, or of another mode
				return
			}
			st.quickOK.Add(1)
			r.bindAttempt(r.keepAttempt(li, at, sent), time.Now())
		}},
	}
}

// misfits counts the items of a "not full, mode = m, most players first"
// page that are full, of another mode, or out of order.
func misfits(items []client.Listing, m string) int {
	bad := 0
	for i, l := range items {
		if l.CurrentPlayers >= l.MaxPlayers || l.Attributes["mode"] != m || i > 0 && l.CurrentPlayers > items[i-1].CurrentPlayers {
			bad++
		}
	}
	return bad
}

// filterChecks adds the checks of the filtered kinds, when they ran.
func (r *Run) filterChecks(res *Result, c *Counts) {
	st := &r.filters
	if c.Total(KindBrowseFiltered) > 0 {
		res.addCheck("load.browse_filtered", st.badItems.Load() == 0 && st.pages.Load() > 0,
			"%d filtered pages answered (not full, mode = one of %d, most players first) with %d items; %d items did not pass the filters or broke the order",
			st.pages.Load(), len(loadModes), st.items.Load(), st.badItems.Load())
	}
	if c.Total(KindQuickJoin) > 0 {
		res.addCheck("load.quick_join", st.quickBad.Load() == 0 && st.quickOK.Load() > 0,
			"%d quick joins landed on a live listing of the mode asked (each bound by both peers); %d on another",
			st.quickOK.Load(), st.quickBad.Load())
	}
}

// keepAttempt appends the attempt at (created at sent on live listing li)
// to r.attempts and returns its index.
func (r *Run) keepAttempt(li int, at *client.Attempt, sent time.Time) int {
	h := r.heldAt(li)
	// The SDK has checked the handle and token; the host derives its
	// capability from its presence capability (docs/contracts/semantics.md#capabilities).
	ah := engine.Handle{UUID: engine.UUID(at.Handle)}
	rec := attemptRec{Listing: li, Handle: ah, Client: engine.Capability(at.Token),
		Host: engine.HostAttemptCapability(&h.PresCap, ah), At: sent}
	r.attMu.Lock()
	defer r.attMu.Unlock()
	r.attempts = append(r.attempts, rec)
	return len(r.attempts) - 1
}
