package memstore

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func TestMemStoreLifecycle(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	if v.Version != 1 || v.LeaseTTL != engine.DefaultLeaseTTL || v.Spec.Region != "eu-central" {
		t.Fatalf("view = %+v", v)
	}
	a := f.attempt(v, "client-1")
	if a.HostPresence != v.Presence || a.HostPresencePublic != fxPub(40000) || a.TTL != engine.DefaultAttemptTTL {
		t.Fatalf("attempt view = %+v", a)
	}
	// The pending list names the attempt until the host binds.
	pv := f.presence(v, 2)
	if pv.NPending != 1 || pv.Pending[0] != a.Handle || pv.TTL != engine.DefaultPresenceTTL {
		t.Fatalf("presence view = %+v", pv)
	}
	if h, ok := f.s.AttemptHost(a.Handle); !ok || h != v.Presence {
		t.Fatalf("AttemptHost = %v, %v", h, ok)
	}
	ops := []engine.Op{{Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.RoleHost, 1000)}, {Kind: engine.OpBindAttempt, Bind: f.bindCmd(a, engine.RoleClient, 2000)}}
	if err := f.s.ApplyBatch(f.ctx, ops); err != nil {
		t.Fatal(err)
	}
	if ops[0].Result.Outcome != engine.Success || ops[0].IntroReady || !ops[1].IntroReady || !ops[1].FirstIntro ||
		ops[1].Intro.Host.Public != fxPub(1000) || ops[1].Intro.Client.Public != fxPub(2000) {
		t.Fatalf("batch = %+v / %+v", ops[0], ops[1])
	}
	f.check()
	if pv := f.presence(v, 3); pv.NPending != 0 {
		t.Fatalf("pending after host bind: %+v", pv)
	}
	// A retransmission reads the introduction back without consuming again.
	ops = ops[1:]
	f.s.ApplyBatch(f.ctx, ops)
	if !ops[0].Result.Replay || !ops[0].IntroReady || ops[0].FirstIntro {
		t.Fatalf("retransmission = %+v", ops[0])
	}
	if _, r, _ := f.s.ConsumeIntroduction(f.ctx, a.Handle); r.Outcome != engine.ReplayRejected {
		t.Fatalf("second consume = %v", r)
	}
	if in, r, _ := f.s.Introduction(f.ctx, a.Handle); r.Outcome != engine.Success || in.Attempt != a.ID {
		t.Fatalf("Introduction = %v %+v", r, in)
	}
	if st := f.s.Stats(); st.InFlight != 0 || st.Pools[engine.PoolAttempts-1].Used != 1 || st.Pools[engine.PoolPresence-1].Used != 1 {
		t.Fatalf("stats = %+v", st)
	}
	// Delete cascades.
	r, err := f.s.DeleteListing(f.ctx, engine.DeleteListing{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease)})
	if err != nil || r.Outcome != engine.Success {
		t.Fatalf("delete = %v %v", r, err)
	}
	f.check()
	if _, ok := f.s.AttemptHost(a.Handle); ok {
		t.Fatalf("AttemptHost after delete")
	}
	st := f.s.Stats()
	for p := engine.PoolListings; p <= engine.PoolAttempts; p++ {
		if st.Pools[p-1].Used != 0 {
			t.Fatalf("pool %v used after delete: %+v", p, st)
		}
	}
	if st.Pools[engine.PoolIdempotency-1].Used != 2 {
		t.Fatalf("idempotency records should outlive the resources: %+v", st)
	}
}

func TestMemStoreExpiry(t *testing.T) {
	f := newFx(t, nil)
	v := f.visible("pub-1")
	a := f.attempt(v, "client-1")
	f.advance(engine.DefaultPresenceTTL - 1)
	if _, ok := f.s.AttemptHost(a.Handle); !ok {
		t.Fatalf("attempt gone early")
	}
	f.advance(1) // presence expires: invisible, attempt stays
	items, _, _, _ := f.s.BrowseVisible(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 10}, nil)
	if len(items) != 0 {
		t.Fatalf("browse shows an expired presence")
	}
	f.clock.Advance(engine.DefaultAttemptTTL - engine.DefaultPresenceTTL)
	// Without any locked operation since, AttemptHost must still treat it as gone.
	if _, ok := f.s.AttemptHost(a.Handle); ok {
		t.Fatalf("AttemptHost sees an expired attempt")
	}
	f.check()
	// The last sequence survives presence expiry.
	if _, r, _ := f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 1, Public: fxPub(1)}); r.Outcome != engine.Conflict {
		t.Fatalf("stale sequence after expiry = %v", r)
	}
	f.presence(v, 2)
	f.clock.Advance(engine.DefaultLeaseTTL - engine.DefaultAttemptTTL)
	if _, r := f.getOutcome(v.ID); r != engine.NotFound {
		t.Fatalf("listing after lease = %v", r)
	}
	f.check()
}

func (f *fx) getOutcome(id engine.ListingID) (engine.ListingView, engine.Outcome) {
	v, r, err := f.s.GetListing(f.ctx, engine.GetListing{Tenant: fxTenant, Listing: id})
	if err != nil {
		f.t.Fatal(err)
	}
	return v, r.Outcome
}

func TestMemStoreBrowsePaging(t *testing.T) {
	f := newFx(t, nil)
	var ids []engine.ListingID
	for i := 0; i < 25; i++ {
		cmd := f.listingCmd("pub-1")
		if i%5 == 0 {
			cmd.Spec.Region = "us-east"
		}
		if i%7 == 0 {
			cmd.Spec.Visibility = engine.Unlisted
		}
		if i%2 == 0 {
			cmd.Doc = []byte("doc " + strconv.Itoa(i) + " of eu-central")
		}
		v := f.create(cmd)
		if i%3 != 0 || i%7 == 0 {
			f.presence(v, 1)
		}
		if i%3 != 0 && i%7 != 0 {
			ids = append(ids, v.ID)
		}
	}
	page := func(region string, limit int) []engine.ListingID {
		var got []engine.ListingID
		q := engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Region: region, Limit: limit}
		for n := 0; n < 100; n++ {
			items, more, r, err := f.s.BrowseVisible(f.ctx, q, nil)
			if err != nil || r.Outcome != engine.Success {
				t.Fatalf("browse = %v %v", r, err)
			}
			sameBrowseItems(t, f, q, items, more)
			for _, it := range items {
				got = append(got, it.ID)
			}
			if !more {
				return got
			}
			q.After, q.HasAfter = items[len(items)-1].ID, true
		}
		t.Fatalf("paging did not end")
		return nil
	}
	want := map[engine.ListingID]bool{}
	for _, id := range ids {
		want[id] = true
	}
	for _, limit := range []int{1, 3, 100} {
		got := page("", limit)
		if len(got) != len(ids) {
			t.Fatalf("limit %d: %d items, want %d", limit, len(got), len(ids))
		}
		for i, id := range got {
			if !want[id] || (i > 0 && got[i-1].Compare(id.UUID) >= 0) {
				t.Fatalf("limit %d: wrong or unordered item %v", limit, id)
			}
		}
	}
	eu := page("eu-central", 2)
	us := page("us-east", 2)
	if len(eu)+len(us) != len(ids) || len(us) == 0 {
		t.Fatalf("region pages %d + %d, want %d", len(eu), len(us), len(ids))
	}
	if items, more, _, _ := f.s.BrowseVisible(f.ctx, engine.Browse{Tenant: engine.Tenant{Game: "x", Env: "y"}, ProtocolVersion: 7, Limit: 5}, nil); len(items) != 0 || more {
		t.Fatalf("other tenant sees listings")
	}
}

// sameBrowseItems checks that BrowseItems answers q exactly as
// BrowseVisible did: the same listings in order, the same more flag, and
// items that agree with the views. It returns where the walk goes on.
func sameBrowseItems(t *testing.T, f *fx, q engine.Browse, views []engine.ListingView, more bool) engine.BrowseNext {
	t.Helper()
	items, inext, r, err := f.s.BrowseItems(f.ctx, q, nil)
	if err != nil || r.Outcome != engine.Success || inext.More != more || len(items) != len(views) {
		t.Fatalf("BrowseItems = %d items, more %v, %v %v; BrowseVisible gave %d, %v", len(items), inext.More, r, err, len(views), more)
	}
	for i, it := range items {
		v := &views[i]
		if it.ID != v.ID || it.Spec != v.Spec || int(it.CurrentPlayers) != v.CurrentPlayers ||
			it.LeaseExpiresAt != v.LeaseExpiresAt.UnixMilli() || string(it.Doc) != string(v.Doc) || !it.Attributes.Equal(v.Attributes) {
			t.Fatalf("item %d = %+v, view %+v", i, it, *v)
		}
	}
	return inext
}

func TestMemStoreRejectionsChangeNothing(t *testing.T) {
	f := newFx(t, func(l *engine.Limits) { l.MaxPresence = 1; l.OwnerListingQuota = 2 })
	v := f.visible("pub-1")
	v2 := f.create(f.listingCmd("pub-1"))
	a := f.attempt(v, "client-1")
	before := f.s.Snapshot()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	wantSame := func(name string, err error, r engine.Result, wantErr bool, want engine.Outcome) {
		t.Helper()
		var ie *engine.InputError
		switch {
		case wantErr && !errors.As(err, &ie) && !errors.Is(err, context.Canceled):
			t.Fatalf("%s: err = %v, want an input error or cancellation", name, err)
		case !wantErr && (err != nil || r.Outcome != want):
			t.Fatalf("%s = %v, %v; want %v", name, r, err, want)
		}
		f.check()
		if after := f.s.Snapshot(); after != before {
			t.Fatalf("%s changed the state:\n%s\n---\n%s", name, before, after)
		}
	}
	_, r, err := f.s.CreateListing(f.ctx, f.listingCmd("pub-1"))
	wantSame("owner quota", err, r, false, engine.CapacityExceeded)
	if r.Pool != engine.QuotaOwnerListings {
		t.Fatalf("pool = %v", r.Pool)
	}
	_, r, err = f.s.CreateListing(cancelled, f.listingCmd("pub-2"))
	wantSame("cancelled create", err, r, true, 0)
	bad := f.listingCmd("pub-2")
	bad.Spec.MaxPlayers = 2000
	_, r, err = f.s.CreateListing(f.ctx, bad)
	wantSame("bad spec", err, r, true, 0)
	_, r, err = f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v2.Presence, Key: f.keys.Presence(v2.Presence), Seq: 1, Public: fxPub(5)})
	wantSame("presence pool", err, r, false, engine.CapacityExceeded)
	_, r, err = f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 1, Public: fxPub(5)})
	wantSame("stale seq", err, r, false, engine.Conflict)
	_, r, err = f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Lease(v.Lease), Seq: 9, Public: fxPub(5)})
	wantSame("wrong presence key", err, r, false, engine.NotFound)
	_, r, err = f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 9})
	wantSame("no public endpoint", err, r, true, 0)
	_, r, err = f.s.BindAttemptEndpoint(f.ctx, f.bindCmd(a, engine.RoleHost, 0))
	wantSame("port 0", err, r, true, 0)
	bc := f.bindCmd(a, engine.RoleHost, 7)
	bc.Key = f.keys.Client(a.Handle)
	_, r, err = f.s.BindAttemptEndpoint(f.ctx, bc)
	wantSame("client key as host", err, r, false, engine.NotFound)
	bc.Role = 9
	_, r, err = f.s.BindAttemptEndpoint(f.ctx, bc)
	wantSame("bad role", err, r, true, 0)
	rc := engine.RenewLease{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease), ExpectedVersion: 1, CurrentPlayers: 9}
	_, r, err = f.s.RenewLease(f.ctx, rc)
	wantSame("players above max", err, r, true, 0)
	rc.CurrentPlayers, rc.ExpectedVersion = -1, 5
	cv, r, err := f.s.RenewLease(f.ctx, rc)
	wantSame("stale version", err, r, false, engine.Conflict)
	if cv.Version != 1 {
		t.Fatalf("conflict view version = %d", cv.Version)
	}
	rc.SetAttributes, rc.Attributes = true, engine.Attributes{{Name: "mode", Str: "coop"}}
	_, r, err = f.s.RenewLease(f.ctx, rc)
	wantSame("attributes on a stale version", err, r, false, engine.Conflict)
	rc.ExpectedVersion, rc.Attributes = 1, engine.Attributes{{Name: "Mode", Str: "coop"}}
	_, r, err = f.s.RenewLease(f.ctx, rc)
	wantSame("bad attribute name", err, r, true, 0)
	rc.Attributes = engine.Attributes{{Name: "mode", Str: "a|b"}}
	_, r, err = f.s.RenewLease(f.ctx, rc)
	wantSame("bad attribute value", err, r, true, 0)
	rc.SetAttributes, rc.ExpectedVersion = false, 5
	rc.Owner = "pub-2"
	_, r, err = f.s.RenewLease(f.ctx, rc)
	wantSame("other owner", err, r, false, engine.NotFound)
	r, err = f.s.DeleteListing(f.ctx, engine.DeleteListing{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease})
	wantSame("delete wrong key", err, r, false, engine.NotFound)
	r, err = f.s.RevokeListing(f.ctx, engine.RevokeListing{Tenant: engine.Tenant{Game: "other", Env: "x"}, Listing: v.ID})
	wantSame("revoke other tenant", err, r, false, engine.NotFound)
	_, r, err = f.s.RevokePrincipal(f.ctx, "pub-1", 601*time.Second)
	wantSame("revocation ttl", err, r, true, 0)
	_, _, r, err = f.s.BrowseVisible(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 101}, nil)
	wantSame("browse limit", err, r, true, 0)
	_, _, r, err = f.s.BrowseItems(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 0}, nil)
	wantSame("browse items limit", err, r, true, 0)
	_, _, r, err = f.s.BrowseItems(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Region: "EU", Limit: 5}, nil)
	wantSame("browse items region", err, r, true, 0)
	_, _, r, err = f.s.BrowseItems(cancelled, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 5}, nil)
	wantSame("cancelled browse items", err, r, true, 0)
	_, _, r, err = f.s.BrowseItems(f.ctx, engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Limit: 5, Filter: engine.BrowseFilter{MinFreeSlots: -1}}, nil)
	wantSame("browse bad filter", err, r, true, 0)
	qj := engine.QuickJoin{
		Join:  engine.CreateAttempt{Tenant: fxTenant, Client: "c", IdempotencyKey: "qj", ProtocolVersion: 7},
		Query: engine.Browse{Tenant: fxTenant, ProtocolVersion: 7, Filter: engine.BrowseFilter{Strings: []engine.StringFilter{{Name: "mode", Values: []string{"none"}}}}},
	}
	_, r, err = f.s.QuickJoin(f.ctx, qj)
	wantSame("quick join without a match", err, r, false, engine.NotFound)
	qj.Query.ProtocolVersion = 8
	_, r, err = f.s.QuickJoin(f.ctx, qj)
	wantSame("quick join of another protocol", err, r, true, 0)
	r, err = f.s.ConsumeReplay(f.ctx, engine.ConsumeReplay{Namespace: "n", Key: "k", Lifetime: time.Hour})
	wantSame("replay lifetime", err, r, true, 0)
	ops := []engine.Op{{Kind: 9}, {Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence}}}
	if err := f.s.ApplyBatch(f.ctx, ops); err != nil || ops[0].Err == nil || ops[1].Err == nil {
		t.Fatalf("bad ops accepted: %v %+v", err, ops)
	}
	wantSame("bad batch ops", nil, engine.Result{}, false, engine.Success)
	if err := f.s.ApplyBatch(cancelled, []engine.Op{{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: 99, Public: fxPub(1)}}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled batch = %v", err)
	}
	wantSame("cancelled batch", nil, engine.Result{}, false, engine.Success)
}

func TestMemStoreRevokePrincipal(t *testing.T) {
	f := newFx(t, func(l *engine.Limits) { l.MaxRevocations = 2 })
	v := f.visible("pub-1")
	f.visible("pub-1")
	other := f.visible("pub-2")
	f.attempt(v, "pub-1")         // own attempt on own listing
	f.attempt(other, "pub-1")     // attempt on someone else's listing
	keep := f.attempt(other, "c") // unrelated
	n, r, err := f.s.RevokePrincipal(f.ctx, "pub-1", time.Minute)
	if err != nil || r.Outcome != engine.Success || n != 4 {
		t.Fatalf("revoke = %d %v %v, want 4", n, r, err)
	}
	f.check()
	if st := f.s.Stats(); st.Pools[engine.PoolListings-1].Used != 1 || st.Pools[engine.PoolAttempts-1].Used != 1 || st.Pools[engine.PoolRevocations-1].Used != 1 {
		t.Fatalf("stats after revoke = %+v", st)
	}
	if _, ok := f.s.AttemptHost(keep.Handle); !ok {
		t.Fatalf("unrelated attempt removed")
	}
	if ok, _ := f.s.Revoked(f.ctx, "pub-1"); !ok {
		t.Fatalf("not revoked")
	}
	if _, r, _ := f.s.CreateListing(f.ctx, f.listingCmd("pub-1")); r.Outcome != engine.Revoked {
		t.Fatalf("create by revoked = %v", r)
	}
	f.s.RevokePrincipal(f.ctx, "x", time.Second)
	if _, r, _ := f.s.RevokePrincipal(f.ctx, "pub-2", time.Minute); r.Outcome != engine.CapacityExceeded || r.Pool != engine.PoolRevocations {
		t.Fatalf("full revocation pool = %v", r)
	}
	// Re-revoking a revoked subject is allowed with a full pool.
	if _, r, _ := f.s.RevokePrincipal(f.ctx, "pub-1", 2*time.Minute); r.Outcome != engine.Success {
		t.Fatalf("re-revoke = %v", r)
	}
	f.advance(time.Second)
	if ok, _ := f.s.Revoked(f.ctx, "x"); ok {
		t.Fatalf("revocation outlived its ttl")
	}
	f.advance(2 * time.Minute)
	if ok, _ := f.s.Revoked(f.ctx, "pub-1"); ok {
		t.Fatalf("revocation outlived its ttl")
	}
}

func TestMemStoreDrainAndUnavailable(t *testing.T) {
	f := newFx(t, func(l *engine.Limits) { l.DrainWindow = 5 * time.Second })
	v := f.visible("pub-1")
	a := f.attempt(v, "c")
	f.s.RevokePrincipal(f.ctx, "bad", time.Minute)
	if err := f.s.BeginDrain(f.ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	f.s.BeginDrain(f.ctx) // idempotent: the first deadline stays
	if _, r, _ := f.s.CreateListing(f.ctx, f.listingCmd("p")); r.Outcome != engine.Draining {
		t.Fatalf("create while draining = %v", r)
	}
	if _, r, _ := f.s.RenewLease(f.ctx, engine.RenewLease{Tenant: fxTenant, Owner: "pub-1", Listing: v.ID, Lease: v.Lease, LeaseKey: f.keys.Lease(v.Lease), ExpectedVersion: 1, CurrentPlayers: -1}); r.Outcome != engine.Draining {
		t.Fatalf("renew while draining = %v", r)
	}
	f.presence(v, 2) // accepted while draining
	if _, r, _ := f.s.BindAttemptEndpoint(f.ctx, f.bindCmd(a, engine.RoleClient, 1)); r.Outcome != engine.Success {
		t.Fatalf("bind while draining = %v", r)
	}
	f.clock.Advance(4 * time.Second)
	if _, ok := f.s.AttemptHost(a.Handle); ok {
		t.Fatalf("AttemptHost after the drain window")
	}
	f.check()
	st := f.s.Stats()
	if !st.Draining || st.Pools[engine.PoolListings-1].Used != 0 || st.Pools[engine.PoolIdempotency-1].Used != 0 || st.Pools[engine.PoolRevocations-1].Used != 1 {
		t.Fatalf("stats after drain = %+v", st)
	}
	g := newFx(t, nil)
	gv := g.visible("p")
	g.s.MarkUnavailable()
	g.check()
	if _, r := g.getOutcome(gv.ID); r != engine.ServiceUnavailable || g.s.Available() || g.s.Stats().Pools[0].Used != 0 {
		t.Fatalf("unavailable store = %v", r)
	}
}

func TestMemStoreIdempotency(t *testing.T) {
	f := newFx(t, nil)
	cmd := f.listingCmd("pub-1")
	v := f.create(cmd)
	v2, r, _ := f.s.CreateListing(f.ctx, cmd)
	if !r.Replay || v2.ID != v.ID || v2.Lease != v.Lease {
		t.Fatalf("replay = %v %+v", r, v2)
	}
	changed := cmd
	changed.Spec.DisplayName = "other"
	if _, r, _ := f.s.CreateListing(f.ctx, changed); r.Outcome != engine.Conflict {
		t.Fatalf("changed request = %v", r)
	}
	other := cmd
	other.Owner = "pub-2" // same key, other subject: another namespace
	if _, r, _ := f.s.CreateListing(f.ctx, other); r.Outcome != engine.Success || r.Replay {
		t.Fatalf("other subject's key = %v", r)
	}
	f.advance(engine.DefaultLeaseTTL)
	if _, r, _ := f.s.CreateListing(f.ctx, cmd); r.Outcome != engine.Expired {
		t.Fatalf("replay after expiry = %v", r)
	}
	f.advance(engine.DefaultIdempotencyTTL - engine.DefaultLeaseTTL)
	if _, r, _ := f.s.CreateListing(f.ctx, cmd); r.Outcome != engine.Success || r.Replay {
		t.Fatalf("after the idempotency record expired = %v", r)
	}
	f.check()
}

// TestApplyBatchMixed mixes accepted, unknown, wrongly keyed, stale and
// invalid ops in a batch longer than one read batch (64): each op gets its
// own outcome, a later op sees an earlier one's sequence, and ApplyBatch's
// read-only warm pass changes nothing of that.
func TestApplyBatchMixed(t *testing.T) {
	const n = 64 + 9
	f := newFx(t, nil)
	vs := []engine.ListingView{f.visible("pub-1"), f.visible("pub-1"), f.visible("pub-2")}
	seq := []uint64{1, 1, 1}
	want := make([]engine.Outcome, 0, n)
	ops := make([]engine.Op, 0, n)
	for i := 0; i < n; i++ {
		v := vs[i%3]
		op := engine.Op{Kind: engine.OpPresence, Presence: engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Public: fxPub(4000)}}
		outcome := engine.Success
		switch i % 5 {
		case 0, 3:
			seq[i%3]++
			op.Presence.Seq = seq[i%3]
		case 1:
			op.Presence.Handle = engine.Handle{UUID: engine.NewUUID()}
			op.Presence.Seq = 99
			outcome = engine.NotFound
		case 2:
			op.Presence.Key = f.keys.Lease(v.Lease)
			op.Presence.Seq = 99
			outcome = engine.NotFound
		case 4:
			op.Presence.Seq = 1
			outcome = engine.Conflict
		}
		ops = append(ops, op)
		want = append(want, outcome)
	}
	ops[n-8].Kind = 9 // an invalid op
	if err := f.s.ApplyBatch(f.ctx, ops); err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		if i == n-8 {
			if ops[i].Err == nil {
				t.Fatalf("op %d: invalid kind accepted", i)
			}
			continue
		}
		if ops[i].Err != nil || ops[i].Result.Outcome != want[i] {
			t.Fatalf("op %d = %v %v, want %v", i, ops[i].Result.Outcome, ops[i].Err, want[i])
		}
		if want[i] == engine.Success && ops[i].PresenceView.Listing != vs[i%3].ID {
			t.Fatalf("op %d: view of %v, want %v", i, ops[i].PresenceView.Listing, vs[i%3].ID)
		}
	}
	f.check()
	for k, v := range vs {
		// The last accepted sequence of each listing is the highest sent.
		_, r, _ := f.s.BindHostPresence(f.ctx, engine.BindPresence{Handle: v.Presence, Key: f.keys.Presence(v.Presence), Seq: seq[k], Public: fxPub(1)})
		if r.Outcome != engine.Conflict {
			t.Fatalf("listing %d: seq %d not the last accepted (%v)", k, seq[k], r.Outcome)
		}
	}
}
