package memstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/storetest"
)

// TestMemStoreRandomOps drives random interleavings of every transition and
// of time (small pools, so capacity paths run too), checks every invariant
// after each step, and compares browse with a naive filter over GetListing.
func TestMemStoreRandomOps(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomOps(t, seed) })
	}
}

func randomOps(t *testing.T, seed uint64) {
	f := newFx(t, func(l *engine.Limits) {
		l.MaxListings, l.MaxPresence, l.MaxAttempts, l.MaxIdempotency = 12, 8, 10, 40
		l.MaxReplay, l.MaxRevocations, l.OwnerListingQuota, l.TenantAttemptQuota = 5, 2, 5, 8
		l.TenantListingQuota, l.SubjectAttemptQuota, l.TenantIdempotencyQuota = 8, 6, 30
		l.SubjectIdempotencyQuota = 12
		l.PresenceTTL, l.AttemptTTL, l.LeaseTTL, l.IdempotencyTTL = 3*time.Second, 4*time.Second, 6*time.Second, 8*time.Second
	})
	r := rand.New(rand.NewPCG(seed, 99))
	owners := []engine.Subject{"p1", "p2", "p3"}
	clients := []engine.Subject{"c1", "c2", "p1"}
	tenants := []engine.Tenant{fxTenant, {Game: "other", Env: "test"}}
	var listings []engine.ListingView
	var attempts []engine.AttemptView
	seqs := map[engine.Handle]uint64{}
	seen := map[string]int{} // outcomes per operation, to prove each path ran
	pickL := func() (engine.ListingView, bool) {
		if len(listings) == 0 {
			return engine.ListingView{}, false
		}
		return listings[r.IntN(len(listings))], true
	}
	for step := 0; step < 1500; step++ {
		switch op := r.IntN(14); op {
		case 0, 1:
			sp := storetest.Spec()
			sp.ProtocolVersion = uint32(7 + r.IntN(2))
			sp.Region = []string{"eu", "us"}[r.IntN(2)]
			if r.IntN(4) == 0 {
				sp.Visibility = engine.Unlisted
			}
			sp.Attributes = randomAttrs(r)
			v, res, err := f.s.CreateListing(f.ctx, engine.CreateListing{Tenant: tenants[r.IntN(2)], Owner: owners[r.IntN(3)],
				IdempotencyKey: fmt.Sprintf("k%d", r.IntN(30)), Spec: sp})
			if err != nil {
				t.Fatal(err)
			}
			seen["create "+res.Outcome.String()+res.Pool.String()]++
			if res.OK() && !res.Replay {
				listings = append(listings, v)
			}
		case 2, 3, 4:
			if v, ok := pickL(); ok {
				seqs[v.Presence] += uint64(r.IntN(2)) // sometimes a stale repeat
				_, res, _ := f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: seqs[v.Presence], Public: fxPub(uint16(1 + r.IntN(3)))})
				seen["presence "+res.Outcome.String()]++
			}
		case 5:
			if v, ok := pickL(); ok {
				// Players up to max (8) but rarely full, so joins succeed.
				f.s.RenewLease(f.ctx, engine.RenewLease{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease,
					LeaseKey: f.keys.Lease(v.Lease), ExpectedVersion: uint64(1 + r.IntN(3)), CurrentPlayers: min(r.IntN(12)-1, 8),
					SetAttributes: r.IntN(2) == 0, Attributes: randomAttrs(r)})
			}
		case 6:
			if v, ok := pickL(); ok {
				f.s.DeleteListing(f.ctx, engine.DeleteListing{Tenant: v.Tenant, Owner: v.Owner, Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease)})
			}
		case 7, 8:
			if v, ok := pickL(); ok {
				join := engine.CreateAttempt{Tenant: v.Tenant, Client: clients[r.IntN(3)],
					IdempotencyKey: fmt.Sprintf("j%d", r.IntN(30)), Listing: v.ID, ProtocolVersion: v.Spec.ProtocolVersion}
				kind := "attempt "
				var a engine.AttemptView
				var res engine.Result
				var err error
				if r.IntN(3) == 0 {
					kind = "quick join "
					q := randomQuery(r, v.Tenant, v.Spec.ProtocolVersion)
					a, res, err = f.s.QuickJoin(f.ctx, engine.QuickJoin{Join: join, Query: q})
				} else {
					a, res, err = f.s.CreateJoinAttempt(f.ctx, join)
				}
				if err != nil {
					t.Fatal(err)
				}
				seen[kind+res.Outcome.String()+res.Pool.String()]++
				if res.OK() && !res.Replay {
					attempts = append(attempts, a)
				}
			}
		case 9, 10:
			if len(attempts) > 0 {
				a := attempts[r.IntN(len(attempts))]
				ops := []engine.Op{{Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.Role(1+r.IntN(2)), uint16(1+r.IntN(2)))}}
				if r.IntN(2) == 0 {
					ops = append(ops, engine.Op{Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.Role(1+r.IntN(2)), 1)})
				}
				if err := f.s.ApplyBatch(f.ctx, ops); err != nil {
					t.Fatal(err)
				}
				for _, op := range ops {
					if op.FirstIntro {
						seen["intro"]++
					}
				}
				if r.IntN(3) == 0 {
					f.s.ConsumeIntroduction(f.ctx, a.Handle)
				}
			}
		case 11:
			switch r.IntN(4) {
			case 0:
				f.s.RevokePrincipal(f.ctx, []engine.Subject{"p1", "c2", "x"}[r.IntN(3)], time.Duration(1+r.IntN(5))*time.Second)
			case 1:
				if v, ok := pickL(); ok {
					f.s.RevokeListing(f.ctx, engine.RevokeListing{Tenant: v.Tenant, Listing: v.ID})
				}
			default:
				f.s.ConsumeReplay(f.ctx, engine.ConsumeReplay{Namespace: "n", Key: fmt.Sprint(r.IntN(8)), Lifetime: time.Duration(r.IntN(4)) * time.Second})
			}
		default:
			f.clock.Advance(time.Duration(r.IntN(1500)) * time.Millisecond)
		}
		f.check()
		if step%10 == 0 {
			checkBrowse(t, f, r, listings, tenants[r.IntN(2)], uint32(7+r.IntN(2)), []string{"", "eu", "us"}[r.IntN(3)])
		}
	}
	// Two tenants share the listing pool: fair shares keep its last free
	// slots for a third, so they meet their share (tenant_listings) before
	// the pool is full (Contract/Capacity fills it from one tenant).
	for _, k := range []string{"create success", "create capacity_exceededtenant_listings", "create capacity_exceededowner_listings",
		"create conflict", "presence success", "presence conflict", "presence not_found", "attempt success", "attempt not_found", "intro",
		"quick join success", "quick join not_found"} {
		if seen[k] == 0 {
			t.Errorf("path %q never ran: %v", k, seen)
		}
	}
}

// checkBrowse compares BrowseVisible, with a random filter and order (not
// OrderCreated: a view does not show the creation stamp), with a naive
// filter of GetListing.
func checkBrowse(t *testing.T, f *fx, r *rand.Rand, known []engine.ListingView, tenant engine.Tenant, proto uint32, region string) {
	t.Helper()
	q := randomQuery(r, tenant, proto)
	q.Region, q.Limit, q.Order, q.Desc = region, 2, engine.Order(r.IntN(3)), r.IntN(2) == 0
	var want []engine.ListingView
	for _, v := range known {
		g, r, err := f.s.GetListing(f.ctx, engine.GetListing{Tenant: tenant, Listing: v.ID, Joinable: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.OK() && g.Spec.Visibility == engine.Public && g.Spec.ProtocolVersion == proto && (region == "" || g.Spec.Region == region) &&
			q.Filter.Match(int32(g.CurrentPlayers), int32(g.Spec.MaxPlayers), g.Attributes) {
			want = append(want, g)
		}
	}
	key := func(v *engine.ListingView) int64 {
		return engine.OrderKey(q.Order, int32(v.CurrentPlayers), int32(v.Spec.MaxPlayers), 0)
	}
	slices.SortFunc(want, func(a, b engine.ListingView) int {
		c := cmp.Or(cmp.Compare(key(&a), key(&b)), a.ID.Compare(b.ID.UUID))
		if q.Desc {
			return -c
		}
		return c
	})
	var got []engine.ListingID
	for n := 0; n < 50; n++ {
		items, more, _, err := f.s.BrowseVisible(f.ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		next := sameBrowseItems(t, f, q, items, more)
		for _, it := range items {
			got = append(got, it.ID)
		}
		if !more {
			break
		}
		q.After, q.AfterKey, q.Since, q.HasAfter = next.After, next.AfterKey, next.Since, true
	}
	if len(got) != len(want) {
		t.Fatalf("browse %v/%d/%q %+v = %v, want %d listings", tenant, proto, region, q, got, len(want))
	}
	for i := range want {
		if got[i] != want[i].ID {
			t.Fatalf("browse %v/%d/%q %+v: listing %d = %v, want %v", tenant, proto, region, q, i, got[i], want[i].ID)
		}
	}
}

// randomAttrs are a listing's random indexed attributes.
func randomAttrs(r *rand.Rand) engine.Attributes {
	var as engine.Attributes
	if r.IntN(3) != 0 {
		as = append(as, engine.Attribute{Name: "level", Num: int64(r.IntN(4)), IsNum: true})
	}
	if r.IntN(3) != 0 {
		as = append(as, engine.Attribute{Name: "mode", Str: []string{"coop", "pvp"}[r.IntN(2)]})
	}
	return as
}

// randomQuery is a random filter of tenant's protocol proto listings.
func randomQuery(r *rand.Rand, tenant engine.Tenant, proto uint32) engine.Browse {
	q := engine.Browse{Tenant: tenant, ProtocolVersion: proto, Limit: 1}
	switch r.IntN(5) {
	case 0:
		q.Filter.MinFreeSlots = int32(r.IntN(4))
	case 1:
		q.Filter.Strings = []engine.StringFilter{{Name: "mode", Values: []string{[]string{"coop", "pvp"}[r.IntN(2)]}}}
	case 2:
		q.Filter.Numbers = []engine.NumberFilter{{Name: "level", Op: engine.OpGe, Value: int64(r.IntN(4))}}
	case 3:
		q.Filter.MinPlayers, q.Filter.MaxPlayers, q.Filter.HasMaxPlayers = 1, int32(r.IntN(8)), true
	}
	return q
}
