package storetest

// The Query group: indexed attributes, browse filters and orders, the
// continuation, the examination bound, the Full refusal and quick join
// (docs/contracts/semantics.md#filters-and-order), each against a model.

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func runQuery(t *testing.T, f Factory, o options) {
	if o.noQuery {
		t.Skip("the store has no browse filters, orders or quick join (WithoutBrowseQuery)")
	}
	runGroups(t, f, []group{
		{"Attributes", runAttributes},
		{"FiltersAndOrders", runFiltersAndOrders},
		{"NoDuplicateUnderChurn", runChurnWalk},
		{"ExaminationBound", runExamineBound},
		{"Full", runFull},
		{"QuickJoin", runQuickJoin},
		{"QuickJoinRace", runQuickJoinRace},
	})
}

// feature is the store as T (engine.ItemBrowser, engine.QuickJoiner):
// every store with the query features must be both.
func feature[T any](e *env) T {
	e.t.Helper()
	v, ok := e.s.(T)
	if !ok {
		e.t.Fatalf("%T is not a %T (pass WithoutBrowseQuery for a store without filters and quick join)", e.s, new(T))
	}
	return v
}

func (e *env) items() engine.ItemBrowser { return feature[engine.ItemBrowser](e) }

// qListing is the model of one listing the query tests made.
type qListing struct {
	v       engine.ListingView // the latest view (version, players, attributes)
	created int                // creation order: the store's stamps rise with it
	visible bool               // public, fresh presence
}

func (l *qListing) key(o engine.Order) int64 {
	return engine.OrderKey(o, int32(l.v.CurrentPlayers), int32(l.v.Spec.MaxPlayers), int64(l.created))
}

func (l *qListing) match(q *engine.Browse) bool {
	return l.visible && l.v.Tenant == q.Tenant && l.v.Spec.ProtocolVersion == q.ProtocolVersion &&
		(q.Region == "" || q.Region == l.v.Spec.Region) &&
		q.Filter.Match(int32(l.v.CurrentPlayers), int32(l.v.Spec.MaxPlayers), l.v.Attributes)
}

// qModel is the listings of a query test, in creation order.
type qModel struct {
	e  *env
	ls []*qListing
}

// add creates a listing from cmd one clock millisecond after the last, so
// creation stamps rise with creation order, and binds its presence when
// fresh. The invariants are checked after each of the first 64 listings,
// then after every 64th (they cost O(listings)).
func (m *qModel) add(cmd engine.CreateListing, fresh bool) *qListing {
	e := m.e
	e.t.Helper()
	e.c.Advance(time.Millisecond)
	v, r, err := e.s.CreateListing(e.ctx, cmd)
	e.want("CreateListing", r, err, engine.Success)
	l := &qListing{v: v, created: len(m.ls)}
	if fresh {
		_, r, err := e.s.BindHostPresence(e.ctx, e.presenceCmd(v, 1, pub(40000)))
		e.want("BindHostPresence", r, err, engine.Success)
		l.visible = v.Spec.Visibility == engine.Public
	}
	m.ls = append(m.ls, l)
	if len(m.ls) <= 64 || len(m.ls)%64 == 0 {
		e.check()
	}
	return l
}

// renew renews l with cmd's players and attributes changes, requiring
// Success, and updates the model.
func (m *qModel) renew(l *qListing, players int, attrs engine.Attributes, setAttrs bool) {
	m.e.t.Helper()
	cmd := m.e.renewCmd(l.v)
	cmd.CurrentPlayers, cmd.SetAttributes, cmd.Attributes = players, setAttrs, attrs
	v, r, err := m.e.s.RenewLease(m.e.ctx, cmd)
	m.e.want("RenewLease", r, err, engine.Success)
	l.v = v
}

// want is every listing q matches, in q's order.
func (m *qModel) want(q *engine.Browse) []engine.ListingID {
	var ls []*qListing
	for _, l := range m.ls {
		if l.match(q) {
			ls = append(ls, l)
		}
	}
	slices.SortFunc(ls, func(a, b *qListing) int {
		c := cmp.Or(cmp.Compare(a.key(q.Order), b.key(q.Order)), a.v.ID.Compare(b.v.ID.UUID))
		if q.Desc {
			return -c
		}
		return c
	})
	ids := make([]engine.ListingID, len(ls))
	for i, l := range ls {
		ids[i] = l.v.ID
	}
	return ids
}

// page is one BrowseItems page of q, checked against BrowseVisible's page
// of the same query (the same listings, more flag and attributes).
func (e *env) page(q engine.Browse) ([]engine.BrowseItem, engine.BrowseNext) {
	e.t.Helper()
	items, next, r, err := e.items().BrowseItems(e.ctx, q, nil)
	e.want("BrowseItems", r, err, engine.Success)
	views, more, r, err := e.s.BrowseVisible(e.ctx, q, nil)
	e.want("BrowseVisible", r, err, engine.Success)
	if len(items) > q.Limit || len(views) != len(items) || more != next.More {
		e.t.Fatalf("query %s: BrowseItems %d items more %v, BrowseVisible %d more %v", fmtQuery(&q), len(items), next.More, len(views), more)
	}
	for i := range items {
		if items[i].ID != views[i].ID || !items[i].Attributes.Equal(views[i].Attributes) || int(items[i].CurrentPlayers) != views[i].CurrentPlayers {
			e.t.Fatalf("query %s: item %d %v, view %v", fmtQuery(&q), i, items[i].ID, views[i].ID)
		}
	}
	if next.More && next.Since == 0 {
		e.t.Fatalf("query %s: a continuation without a change version", fmtQuery(&q))
	}
	return items, next
}

// walk pages q to the end (at most maxPages pages), calling between (if
// not nil) after every page, and returns the IDs in order.
func (e *env) walk(q engine.Browse, maxPages int, between func()) []engine.ListingID {
	e.t.Helper()
	var got []engine.ListingID
	for page := 0; ; page++ {
		if page == maxPages {
			e.t.Fatalf("query %s: the walk does not end in %d pages", fmtQuery(&q), maxPages)
		}
		items, next := e.page(q)
		for _, it := range items {
			got = append(got, it.ID)
		}
		if !next.More {
			return got
		}
		q.HasAfter, q.After, q.AfterKey, q.Since = true, next.After, next.AfterKey, next.Since
		if between != nil {
			between()
		}
	}
}

func fmtQuery(q *engine.Browse) string {
	return fmt.Sprintf("{region %q order %v desc %v limit %d filter %+v after %v/%d since %d}",
		q.Region, q.Order, q.Desc, q.Limit, q.Filter, q.HasAfter, q.AfterKey, q.Since)
}

var (
	qModes = []string{"coop", "pvp", "duel"}
	// qFilters are the filters every order is walked with: each kind of
	// filter, combinations, and filters nothing matches.
	qFilters = []engine.BrowseFilter{
		{},
		{MinFreeSlots: 1},
		{MinFreeSlots: 3},
		{MinPlayers: 1},
		{HasMaxPlayers: true},
		{MinPlayers: 2, MaxPlayers: 4, HasMaxPlayers: true},
		{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}},
		{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"duel", "coop"}}}},
		{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"none"}}}},
		{Strings: []engine.StringFilter{{Name: "level", Values: []string{"3"}}}}, // a number: no match
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpEq, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpNe, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpLt, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpLe, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGt, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: 2}}},
		{Numbers: []engine.NumberFilter{{Name: "mode", Op: engine.OpGe, Value: 0}}}, // a string: no match
		{MinFreeSlots: 1, Strings: []engine.StringFilter{{Name: "mode", Values: []string{"coop"}}}},
		{MinFreeSlots: 1, MinPlayers: 1, Strings: []engine.StringFilter{{Name: "map", Values: []string{"x"}}},
			Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: 1}}},
	}
)

// qPopulate makes n listings of varied players, capacity, region and
// attributes (some unlisted or without presence), plus noise of another
// tenant and protocol.
func qPopulate(e *env, n int) *qModel {
	m := &qModel{e: e}
	for i := range n {
		c := e.listingCmd(engine.Subject(fmt.Sprintf("qpub-%d", i%4)))
		c.Spec.MaxPlayers = 2 + i%7
		c.Spec.CurrentPlayers = (i * 5) % (c.Spec.MaxPlayers + 1)
		if i%5 == 0 {
			c.Spec.Region = "us-east"
		}
		if i%13 == 12 {
			c.Spec.Visibility = engine.Unlisted
		}
		if i%2 == 0 {
			c.Spec.Attributes = append(c.Spec.Attributes, engine.Attribute{Name: "level", Num: int64(i % 6), IsNum: true})
		}
		if i%9 == 0 {
			c.Spec.Attributes = append(c.Spec.Attributes, engine.Attribute{Name: "map", Str: "x"})
		}
		if i%4 != 3 {
			c.Spec.Attributes = append(c.Spec.Attributes, engine.Attribute{Name: "mode", Str: qModes[i%3]})
		}
		m.add(c, i%11 != 10)
	}
	for _, mod := range []func(*engine.CreateListing){
		func(c *engine.CreateListing) { c.Tenant = otherTenant },
		func(c *engine.CreateListing) { c.Spec.ProtocolVersion = 8 },
	} {
		c := e.listingCmd("qpub-n")
		c.Spec.Attributes = engine.Attributes{{Name: "mode", Str: "coop"}}
		mod(&c)
		m.add(c, true)
	}
	return m
}

// runFiltersAndOrders walks every filter in every order, both directions,
// over every region and the one region, against the model: over a set
// that does not change, every match exactly once, in order.
func runFiltersAndOrders(t *testing.T, f Factory) {
	e := newEnv(t, f)
	m := qPopulate(e, 40)
	// A renewal moves keys and attributes before the walks.
	m.renew(m.ls[1], 0, engine.Attributes{{Name: "mode", Str: "pvp"}}, true)
	m.renew(m.ls[2], 1, nil, false)
	matched := 0
	for _, region := range []string{"", "eu-central"} {
		for fi := range qFilters {
			for o := engine.OrderID; o <= engine.OrderCreated; o++ {
				for _, desc := range []bool{false, true} {
					q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Region: region, Limit: 4, Filter: qFilters[fi], Order: o, Desc: desc}
					want := m.want(&q)
					got := e.walk(q, 20, nil)
					if !slices.Equal(got, want) {
						t.Fatalf("query %s: walked %d listings %v, want %d %v", fmtQuery(&q), len(got), got, len(want), want)
					}
					matched += len(want)
				}
			}
		}
	}
	if matched < 1000 {
		t.Fatalf("BUG: the walks matched %d listings in all: too few to test anything", matched)
	}
	// One page holds every match when the limit allows.
	q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: engine.BrowsePageMax, Filter: qFilters[1], Order: engine.OrderFreeSlots, Desc: true}
	items, next := e.page(q)
	if len(items) != len(m.want(&q)) || next.More {
		t.Fatalf("one page of %d: %d items, more %v", len(m.want(&q)), len(items), next.More)
	}
}

// runChurnWalk walks the Mutable orders while renewals change players
// between pages: no listing comes twice, and every listing no renewal
// touched during the walk comes once.
func runChurnWalk(t *testing.T, f Factory) {
	e := newEnv(t, f)
	m := &qModel{e: e}
	for i := range 30 {
		c := e.listingCmd(engine.Subject(fmt.Sprintf("qpub-%d", i%3)))
		c.Spec.CurrentPlayers = i % 9
		m.add(c, true)
	}
	r := rand.New(rand.NewPCG(26, 1))
	for _, o := range []engine.Order{engine.OrderFreeSlots, engine.OrderCurrentPlayers} {
		for _, desc := range []bool{false, true} {
			for _, filter := range []engine.BrowseFilter{{}, {MinFreeSlots: 1}} {
				touched := map[engine.ListingID]bool{}
				q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 3, Order: o, Desc: desc, Filter: filter}
				got := e.walk(q, 40, func() {
					for range 3 {
						l := m.ls[r.IntN(len(m.ls))]
						m.renew(l, r.IntN(9), nil, false)
						touched[l.v.ID] = true
					}
				})
				seen := map[engine.ListingID]bool{}
				for _, id := range got {
					if seen[id] {
						t.Fatalf("query %s: listing %v returned twice under churn", fmtQuery(&q), id)
					}
					seen[id] = true
				}
				for _, l := range m.ls {
					if !touched[l.v.ID] && l.match(&q) && !seen[l.v.ID] {
						t.Fatalf("query %s: listing %v, unchanged during the walk, never returned", fmtQuery(&q), l.v.ID)
					}
				}
			}
		}
	}
}

// runExamineBound: a filter no index serves (a numeric attribute) that
// only the two highest IDs of many listings match. In ascending ID order
// the first page examines engine.BrowseExamineMax entries and ends empty
// with More and a position the next page goes on from; descending, the
// matches come first and the rest of the walk ends short pages too.
func runExamineBound(t *testing.T, f Factory) {
	e := newEnv(t, f, wholePools)
	const n = engine.BrowseExamineMax + 200
	m := &qModel{e: e}
	for i := range n {
		m.add(e.listingCmd(engine.Subject(fmt.Sprintf("qpub-%d", i%4))), true)
	}
	byID := slices.Clone(m.ls)
	slices.SortFunc(byID, func(a, b *qListing) int { return a.v.ID.Compare(b.v.ID.UUID) })
	rare := engine.Attributes{{Name: "level", Num: 3, IsNum: true}}
	for _, l := range byID[n-2:] {
		m.renew(l, -1, rare, true)
	}
	filter := engine.BrowseFilter{Numbers: []engine.NumberFilter{{Name: "level", Op: engine.OpEq, Value: 3}}}
	q := engine.Browse{Tenant: tenant, ProtocolVersion: 7, Limit: 10, Filter: filter}
	items, next := e.page(q)
	if len(items) != 0 || !next.More {
		t.Fatalf("first ascending page: %d items, more %v; want an empty page cut by the examination bound", len(items), next.More)
	}
	for _, desc := range []bool{false, true} {
		q.Desc = desc
		want := m.want(&q)
		got := e.walk(q, 5, nil)
		if !slices.Equal(got, want) || len(want) != 2 {
			t.Fatalf("desc %v: walked %v, want %v", desc, got, want)
		}
	}
	q.Desc = true
	items, next = e.page(q)
	if len(items) != 2 || !next.More {
		t.Fatalf("first descending page: %d items, more %v; want both matches and more (the bound reached)", len(items), next.More)
	}
}
