package storetest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func (e *env) quick() engine.QuickJoiner { return feature[engine.QuickJoiner](e) }

// quickCmd is a quick join by client with idempotency key key and filter
// f over region's listings.
func quickCmd(client engine.Subject, key, region string, f engine.BrowseFilter) engine.QuickJoin {
	return engine.QuickJoin{
		Join:  engine.CreateAttempt{Tenant: tenant, Client: client, IdempotencyKey: key, ProtocolVersion: 7},
		Query: engine.Browse{Tenant: tenant, ProtocolVersion: 7, Region: region, Filter: f},
	}
}

// best is the model's quick join choice: among the listings q matches
// that are not full, the most players, then the highest ID; nil if none.
func (m *qModel) best(q *engine.Browse) *qListing {
	var b *qListing
	for _, l := range m.ls {
		if !l.match(q) || l.v.CurrentPlayers >= l.v.Spec.MaxPlayers {
			continue
		}
		if b == nil || l.v.CurrentPlayers > b.v.CurrentPlayers ||
			l.v.CurrentPlayers == b.v.CurrentPlayers && l.v.ID.Compare(b.v.ID.UUID) > 0 {
			b = l
		}
	}
	return b
}

// runQuickJoin: every filter's quick join lands on the model's best
// listing, or is NotFound (changing nothing); a replay answers the first
// attempt even after the best listing changed; a replay with another
// query is a Conflict; a quick join's key is its own namespace.
func runQuickJoin(t *testing.T, f Factory) {
	e := newEnv(t, f, wholePools)
	m := qPopulate(e, 40)
	// Ties on players, and the fullest listings full.
	m.renew(m.ls[3], 4, nil, false)
	m.renew(m.ls[4], 4, nil, false)
	qj := e.quick()
	for _, region := range []string{"", "eu-central", "us-east"} {
		for fi, filter := range qFilters {
			cmd := quickCmd("qclient", fmt.Sprintf("qj-%s-%d", region, fi), region, filter)
			want := m.best(&cmd.Query)
			if want == nil {
				e.unchanged("QuickJoin without a match", func() {
					_, r, err := qj.QuickJoin(e.ctx, cmd)
					e.want(fmt.Sprintf("QuickJoin %s", fmtQuery(&cmd.Query)), r, err, engine.NotFound)
				})
				continue
			}
			a, r, err := qj.QuickJoin(e.ctx, cmd)
			e.want(fmt.Sprintf("QuickJoin %s", fmtQuery(&cmd.Query)), r, err, engine.Success)
			if r.Replay || a.Listing != want.v.ID || a.HostPresence != want.v.Presence || a.Client != "qclient" {
				t.Fatalf("QuickJoin %s: attempt on %v (replay %v), want %v (%d/%d players)",
					fmtQuery(&cmd.Query), a.Listing, r.Replay, want.v.ID, want.v.CurrentPlayers, want.v.Spec.MaxPlayers)
			}
			e.check()
		}
	}
	// Replays: the same query answers the first attempt even when another
	// listing is now best; another query is a Conflict.
	cmd := quickCmd("qclient", "replayed", "", engine.BrowseFilter{MinFreeSlots: 1})
	first, r, err := qj.QuickJoin(e.ctx, cmd)
	e.want("QuickJoin", r, err, engine.Success)
	l := m.best(&cmd.Query)
	for _, other := range m.ls { // another listing becomes the best
		if other != l && other.match(&cmd.Query) && other.v.Spec.MaxPlayers-1 > l.v.CurrentPlayers {
			m.renew(other, other.v.Spec.MaxPlayers-1, nil, false)
			break
		}
	}
	if m.best(&cmd.Query) == l {
		t.Fatalf("BUG: the renewal did not change the best listing")
	}
	again, r, err := qj.QuickJoin(e.ctx, cmd)
	e.want("QuickJoin replay", r, err, engine.Success)
	if !r.Replay || again.ID != first.ID || again.Listing != first.Listing {
		t.Fatalf("replay: replay %v, same attempt %v", r.Replay, again.ID == first.ID)
	}
	spelled := cmd
	spelled.Query.Limit, spelled.Query.Order, spelled.Query.Desc = 7, engine.OrderCreated, true // ignored
	if _, r, err = qj.QuickJoin(e.ctx, spelled); err != nil || !r.Replay {
		t.Fatalf("replay with the order and limit changed: %v %v, want a replay", r, err)
	}
	for name, change := range map[string]func(*engine.QuickJoin){
		"filter": func(c *engine.QuickJoin) { c.Query.Filter.MinFreeSlots = 2 },
		"region": func(c *engine.QuickJoin) { c.Query.Region = "eu-central" },
		"attribute": func(c *engine.QuickJoin) {
			c.Query.Filter.Strings = []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}
		},
		"relay only": func(c *engine.QuickJoin) { c.Join.RelayOnly = true },
	} {
		c := cmd
		change(&c)
		e.unchanged("QuickJoin replay with another "+name, func() {
			_, r, err := qj.QuickJoin(e.ctx, c)
			e.want("QuickJoin replay with another "+name, r, err, engine.Conflict)
		})
	}
	// A plain join with the same key is another namespace.
	plain := e.attemptCmd(l.v, "qclient")
	plain.IdempotencyKey = "replayed"
	_, r, err = e.s.CreateJoinAttempt(e.ctx, plain)
	e.want("CreateJoinAttempt with a quick join's key", r, err, engine.Success)
	if r.Replay {
		t.Fatalf("a join replayed a quick join's idempotency record")
	}
	// Bad input changes nothing.
	bad := quickCmd("qclient", "bad", "", engine.BrowseFilter{MinFreeSlots: -1})
	e.unchanged("QuickJoin with a bad filter", func() {
		_, _, err := qj.QuickJoin(e.ctx, bad)
		if err == nil {
			t.Fatalf("QuickJoin with a bad filter: no error")
		}
	})
}

// runQuickJoinRace races quick joins against renewals that fill the last
// free slot of each listing: a quick join that starts after a renewal
// filling a listing returned never lands on that listing, every quick join
// is a Success or NotFound, and once all are full a quick join finds none.
func runQuickJoinRace(t *testing.T, f Factory) {
	e := newEnv(t, f, wholePools)
	m := &qModel{e: e}
	const listings, joiners, joins = 8, 4, 25
	for i := range listings {
		c := e.listingCmd(engine.Subject(fmt.Sprintf("rpub-%d", i)))
		c.Spec.MaxPlayers, c.Spec.CurrentPlayers = 2, 1
		m.add(c, true)
	}
	index := map[engine.ListingID]int{}
	for i, l := range m.ls {
		index[l.v.ID] = i
	}
	qj := e.quick()
	var clock atomic.Int64 // orders events seen from outside the store
	var filledAt [listings]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, joiners*joins+listings)
	start := make(chan struct{}) // every goroutine starts at once
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		for i, l := range m.ls {
			cmd := e.renewCmd(l.v)
			cmd.CurrentPlayers = 2
			if _, r, err := e.s.RenewLease(e.ctx, cmd); err != nil || r.Outcome != engine.Success {
				errs <- fmt.Errorf("renewal filling listing %d: %v %v", i, r.Outcome, err)
				return
			}
			filledAt[i].Store(clock.Add(1))
		}
	}()
	for j := range joiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for n := range joins {
				cmd := quickCmd(engine.Subject(fmt.Sprintf("rclient-%d", j)), fmt.Sprintf("race-%d-%d", j, n), "", engine.BrowseFilter{})
				began := clock.Add(1)
				a, r, err := qj.QuickJoin(e.ctx, cmd)
				switch {
				case err != nil:
					errs <- err
				case r.Outcome == engine.NotFound:
				case r.Outcome != engine.Success:
					errs <- fmt.Errorf("quick join: %v (pool %v)", r.Outcome, r.Pool)
				default:
					i, ok := index[a.Listing]
					if !ok {
						errs <- fmt.Errorf("quick join landed on an unknown listing %v", a.Listing)
					} else if at := filledAt[i].Load(); at != 0 && at < began {
						errs <- fmt.Errorf("quick join that started at %d landed on listing %d, full since %d", began, i, at)
					}
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	e.check()
	_, r, err := qj.QuickJoin(e.ctx, quickCmd("rclient-x", "after", "", engine.BrowseFilter{}))
	e.want("QuickJoin with every listing full", r, err, engine.NotFound)
}
