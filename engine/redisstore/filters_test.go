package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// Filters, orders, continuation and quick join across two instances of one
// deployment (the contract suite checks them on one store).

// createWith makes a public listing through via with max players maxp,
// players and attributes as given, and makes its presence fresh.
func (f *mirrorFixture) createWith(via *redisstore.Store, maxp, players int, attrs engine.Attributes) engine.ListingView {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	v, r, err := via.CreateListing(context.Background(), engine.CreateListing{Tenant: mirrorTenant, Owner: "owner",
		IdempotencyKey: fmt.Sprintf("k%d", n), Spec: engine.ListingSpec{Region: "eu", ProtocolVersion: 1,
			BuildVersion: "1", DisplayName: fmt.Sprintf("listing %d", n), Visibility: engine.Public,
			TrustMode: engine.PlayerHosted, MaxPlayers: maxp, CurrentPlayers: players, Attributes: attrs}})
	if err != nil || !r.OK() {
		f.t.Fatalf("create: %v %v", r.Outcome, err)
	}
	if r := f.refresh(via, v); !r.OK() {
		f.t.Fatalf("refresh: %v", r.Outcome)
	}
	return v
}

// renewAttrs renews v through via, setting players and attributes.
func (f *mirrorFixture) renewAttrs(via *redisstore.Store, v *engine.ListingView, players int, attrs engine.Attributes) {
	f.t.Helper()
	nv, r, err := via.RenewLease(context.Background(), engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner,
		Listing: v.ID, Lease: v.Lease, LeaseKey: f.leaseKey(v), ExpectedVersion: v.Version, CurrentPlayers: players,
		SetAttributes: true, Attributes: attrs})
	if err != nil || !r.OK() {
		f.t.Fatalf("renew: %v %v", r.Outcome, err)
	}
	*v = nv
}

func mode(s string) engine.Attributes {
	return engine.Attributes{{Name: "level", Num: 3, IsNum: true}, {Name: "mode", Str: s}}
}

func modeIs(s string) engine.Browse {
	return engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: engine.BrowsePageMax,
		Filter: engine.BrowseFilter{Strings: []engine.StringFilter{{Name: "mode", Values: []string{s}}}}}
}

func ids(items []engine.BrowseItem) []engine.ListingID {
	out := make([]engine.ListingID, len(items))
	for i := range items {
		out[i] = items[i].ID
	}
	return out
}

func browseOn(t *testing.T, via *redisstore.Store, q engine.Browse) ([]engine.BrowseItem, engine.BrowseNext) {
	t.Helper()
	items, next, r, err := via.BrowseItems(context.Background(), q, nil)
	if err != nil || !r.OK() {
		t.Fatalf("BrowseItems: %v %v", r.Outcome, err)
	}
	return items, next
}

// TestAttributesRenewedOnAFilteredOnB: attributes set at creation and
// replaced by a renewal on instance a are in every view (the renewal's
// answer, GetListing, BrowseVisible, BrowseItems on b) and filtered on at
// once by the next browse on b; a renewal without SetAttributes keeps them
// and one with none clears them.
func TestAttributesRenewedOnAFilteredOnB(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	v := f.createWith(f.a, 8, 1, mode("coop"))
	other := f.createWith(f.a, 8, 1, mode("versus"))
	if !v.Attributes.Equal(mode("coop")) {
		t.Fatalf("create answered attributes %+v", v.Attributes)
	}
	if items, _ := browseOn(t, f.b, modeIs("coop")); !slices.Equal(ids(items), []engine.ListingID{v.ID}) ||
		!items[0].Attributes.Equal(mode("coop")) {
		t.Fatalf("b's coop page: %+v", items)
	}
	f.renewAttrs(f.a, &v, 2, mode("versus"))
	if !v.Attributes.Equal(mode("versus")) {
		t.Fatalf("the renewal answered attributes %+v", v.Attributes)
	}
	if items, _ := browseOn(t, f.b, modeIs("coop")); len(items) != 0 {
		t.Fatalf("b still shows the old attribute: %+v", items)
	}
	want := []engine.ListingID{v.ID, other.ID}
	slices.SortFunc(want, func(x, y engine.ListingID) int { return x.UUID.Compare(y.UUID) })
	items, _ := browseOn(t, f.b, modeIs("versus"))
	if !slices.Equal(ids(items), want) {
		t.Fatalf("b's versus page: %v, want %v", ids(items), want)
	}
	views, _, r, err := f.b.BrowseVisible(ctx, modeIs("versus"), nil)
	if err != nil || !r.OK() || len(views) != 2 {
		t.Fatalf("BrowseVisible: %d %v %v", len(views), r.Outcome, err)
	}
	for i := range views {
		if views[i].ID != want[i] || !views[i].Attributes.Equal(mode("versus")) {
			t.Fatalf("BrowseVisible view %d: %v %+v", i, views[i].ID, views[i].Attributes)
		}
	}
	f.renew(f.a, &v, 3) // without SetAttributes: they stay
	got, r, err := f.b.GetListing(ctx, engine.GetListing{Tenant: mirrorTenant, Listing: v.ID})
	if err != nil || !r.OK() || !got.Attributes.Equal(mode("versus")) || got.CurrentPlayers != 3 {
		t.Fatalf("GetListing: %+v %v %v", got.Attributes, r.Outcome, err)
	}
	if err := f.b.CheckBrowseIndex(); err != nil {
		t.Fatal(err)
	}
	f.renewAttrs(f.a, &v, 3, nil)
	if got, _, _ := f.b.GetListing(ctx, engine.GetListing{Tenant: mirrorTenant, Listing: v.ID}); got.Attributes != nil {
		t.Fatalf("cleared attributes read back as %+v", got.Attributes)
	}
	if items, _ := browseOn(t, f.b, modeIs("versus")); !slices.Equal(ids(items), []engine.ListingID{other.ID}) {
		t.Fatalf("b's versus page after clearing: %v", ids(items))
	}
	// A renewal with invalid attributes changes nothing.
	_, _, err = f.a.RenewLease(ctx, engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
		LeaseKey: f.leaseKey(&v), ExpectedVersion: v.Version, CurrentPlayers: 5, SetAttributes: true,
		Attributes: engine.Attributes{{Name: "Bad", Str: "x"}}})
	if err == nil {
		t.Fatal("a renewal with an invalid attribute name was accepted")
	}
	if got, _, _ := f.b.GetListing(ctx, engine.GetListing{Tenant: mirrorTenant, Listing: v.ID}); got.Version != v.Version || got.CurrentPlayers != 3 {
		t.Fatalf("the refused renewal changed the listing: version %d players %d", got.Version, got.CurrentPlayers)
	}
}

// walkAcross pages q to its end alternating between the instances (page k
// on vias[k%2]), calling between(k) after each page, and answers the IDs
// in the order returned.
func walkAcross(t *testing.T, vias [2]*redisstore.Store, q engine.Browse, between func(k int)) []engine.ListingID {
	t.Helper()
	var out []engine.ListingID
	for k := 0; ; k++ {
		if k > 1000 {
			t.Fatal("the walk does not end")
		}
		items, next := browseOn(t, vias[k%2], q)
		out = append(out, ids(items)...)
		if !next.More {
			return out
		}
		q.HasAfter, q.After, q.AfterKey, q.Since = true, next.After, next.AfterKey, next.Since
		between(k)
	}
}

// TestContinuationAcrossInstances: a walk started on one instance goes on
// on the other, in every order and direction: over an unchanging set it
// returns every listing exactly once, in order; under churn (players
// renewed between pages, on either instance) never one twice.
func TestContinuationAcrossInstances(t *testing.T) {
	f := newMirrorFixture(t)
	const n = 40
	views := make([]engine.ListingView, n)
	for i := range views {
		views[i] = f.createWith(f.a, 8, i%7, nil)
	}
	vias := [2]*redisstore.Store{f.a, f.b}
	for _, order := range []engine.Order{engine.OrderID, engine.OrderFreeSlots, engine.OrderCurrentPlayers, engine.OrderCreated} {
		for _, desc := range []bool{false, true} {
			q := engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: 6, Order: order, Desc: desc}
			got := walkAcross(t, vias, q, func(int) {})
			all, _ := browseOn(t, f.a, engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Limit: engine.BrowsePageMax,
				Order: order, Desc: desc})
			if !slices.Equal(got, ids(all)) || len(got) != n {
				t.Fatalf("%v desc=%v: the walk across instances returned %d listings, not the %d of one page in order",
					order, desc, len(got), len(all))
			}
			churned := walkAcross(t, vias, q, func(k int) {
				for j := 0; j < 3; j++ {
					v := &views[(k*5+j*11)%n]
					f.renew(vias[(k+j)%2], v, (v.CurrentPlayers+3)%8)
				}
			})
			for _, via := range vias {
				if err := via.CheckBrowseIndex(); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[engine.ListingID]bool{}
			for _, id := range churned {
				if seen[id] {
					t.Fatalf("%v desc=%v: listing %v returned twice under churn", order, desc, id)
				}
				seen[id] = true
			}
		}
	}
}

// TestQuickJoinRacesAcrossInstances: quick joins on both instances race
// a renewal (on either) that fills the last listing with a free slot: each
// lands on it or finds nothing, never on a full listing, and once the
// renewal is acknowledged every quick join finds nothing; a plain join to
// the full listing is refused Full.
func TestQuickJoinRacesAcrossInstances(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	for round := 0; round < 20; round++ {
		attrs := engine.Attributes{{Name: "round", Num: int64(round), IsNum: true}}
		q := engine.Browse{Tenant: mirrorTenant, ProtocolVersion: 1, Filter: engine.BrowseFilter{
			Numbers: []engine.NumberFilter{{Name: "round", Op: engine.OpEq, Value: int64(round)}}}}
		full := f.createWith(f.a, 4, 4, attrs)
		last := f.createWith(f.b, 4, 3, attrs)
		type res struct {
			v   engine.AttemptView
			r   engine.Result
			err error
		}
		var wg sync.WaitGroup
		results := make([]res, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, r, err := f.instanceOf(i).QuickJoin(ctx, engine.QuickJoin{Query: q, Join: engine.CreateAttempt{
					Tenant: mirrorTenant, Client: engine.Subject(fmt.Sprintf("c%d", i)), ProtocolVersion: 1,
					IdempotencyKey: fmt.Sprintf("q%d-%d", round, i)}})
				results[i] = res{v, r, err}
			}()
		}
		f.renew(f.instanceOf(round), &last, 4)
		wg.Wait()
		for i, x := range results {
			switch {
			case x.err != nil:
				t.Fatalf("round %d quick join %d: %v", round, i, x.err)
			case x.r.Outcome == engine.NotFound:
			case x.r.OK() && x.v.Listing == last.ID:
			default:
				t.Fatalf("round %d quick join %d: %v on %v (full %v, last %v)", round, i, x.r.Outcome, x.v.Listing, full.ID, last.ID)
			}
		}
		for i := 0; i < 2; i++ {
			_, r, err := f.instanceOf(i).QuickJoin(ctx, engine.QuickJoin{Query: q, Join: engine.CreateAttempt{
				Tenant: mirrorTenant, Client: "late", ProtocolVersion: 1, IdempotencyKey: fmt.Sprintf("late%d-%d", round, i)}})
			if err != nil || r.Outcome != engine.NotFound {
				t.Fatalf("round %d: a quick join after the last slot filled: %v %v", round, r.Outcome, err)
			}
		}
		_, r, err := f.b.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: mirrorTenant, Client: "plain", ProtocolVersion: 1,
			IdempotencyKey: fmt.Sprintf("p%d", round), Listing: last.ID})
		if err != nil || r.Outcome != engine.Full {
			t.Fatalf("round %d: a join to the full listing: %v %v", round, r.Outcome, err)
		}
	}
}

func (f *mirrorFixture) instanceOf(i int) *redisstore.Store {
	if i%2 == 0 {
		return f.a
	}
	return f.b
}

// TestQuickJoinReplayAndChoice: a quick join takes the listing with the
// most players among those not full (then the highest ID), a replay on
// the other instance answers the same attempt whatever the index finds
// now, and the same key with another query is a conflict.
func TestQuickJoinReplayAndChoice(t *testing.T) {
	f := newMirrorFixture(t)
	ctx := context.Background()
	f.createWith(f.a, 8, 2, mode("coop"))
	best := f.createWith(f.a, 8, 6, mode("coop"))
	f.createWith(f.a, 8, 8, mode("coop"))   // full
	f.createWith(f.a, 8, 7, mode("versus")) // not matching
	q := modeIs("coop")
	join := engine.CreateAttempt{Tenant: mirrorTenant, Client: "c", ProtocolVersion: 1, IdempotencyKey: "qj"}
	v, r, err := f.a.QuickJoin(ctx, engine.QuickJoin{Query: q, Join: join})
	if err != nil || !r.OK() || r.Replay || v.Listing != best.ID {
		t.Fatalf("quick join: %v %v on %v, want %v", r.Outcome, err, v.Listing, best.ID)
	}
	f.renew(f.a, &best, 8) // now full: the index would find another
	again, r, err := f.b.QuickJoin(ctx, engine.QuickJoin{Query: q, Join: join})
	if err != nil || !r.OK() || !r.Replay || again.ID != v.ID {
		t.Fatalf("replay on b: %v %v replay=%v %v, want %v", r.Outcome, err, r.Replay, again.ID, v.ID)
	}
	if _, r, err := f.b.QuickJoin(ctx, engine.QuickJoin{Query: modeIs("versus"), Join: join}); err != nil || r.Outcome != engine.Conflict {
		t.Fatalf("the same key with another query: %v %v", r.Outcome, err)
	}
}
