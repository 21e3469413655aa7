package redisstore_test

import (
	"bufio"
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
)

// TestPerOpWorkFlatFrom1kTo250kListings proves that no transition scans a
// pool: the Redis commands each transition executes (counted by the server,
// INFO commandstats, per command name) are the same with 1,000 and with
// 250,000 live, visible listings. Every command the functions use costs
// O(1) or O(log n) in a pool's size, or is bounded by the page, the
// listing's attempts or the owner's quota, so equal commands mean equal
// work up to the logarithm. Counts, not time: no timing assertion.
func TestPerOpWorkFlatFrom1kTo250kListings(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 250,000 listings; skipped with -short")
	}
	small := opWork(t, 1_000)
	large := opWork(t, 250_000)
	for _, op := range slicesSorted(small) {
		if !maps.Equal(small[op], large[op]) {
			t.Errorf("%s: commands at 1,000 listings %v, at 250,000 %v", op, small[op], large[op])
		}
	}
	// A read the HTTP API makes, its caller's revocation check included,
	// is one call.
	for _, op := range []string{"BrowseItemsAs", "GetListingAs", "AttemptStatusAs", "RevokedInTenant"} {
		if n := large[op]["fcall"]; n != 1 {
			t.Errorf("%s: %d function calls, want 1", op, n)
		}
	}
	t.Logf("commands per transition (same at both sizes): %v", large)
}

func slicesSorted(m map[string]map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// opWork fills a store on a dedicated server with n visible listings and
// returns, per measured transition, the commands it ran.
func opWork(t *testing.T, n int) map[string]map[string]int {
	_, c := dedicatedServer(t)
	ctx := context.Background()
	clock := engine.NewManualClock()
	k := engine.RandomKeyring()
	l := engine.DefaultLimits()
	l.MaxListings, l.MaxPresence, l.MaxIdempotency = n+100, n+100, n+200
	l = l.WholePools()
	s, err := redisstore.New(ctx, redisstore.Config{Client: c, Limits: l, Keyring: k, Clock: clock, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	tenant := engine.Tenant{Game: "g", Env: "e"}
	browseAll := func() {
		if _, _, r, err := s.BrowseItems(ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 1, Limit: 1}, nil); err != nil || !r.OK() {
			t.Fatalf("BrowseItems: %v %v", r.Outcome, err)
		}
	}
	// The instance's first page, on the empty deployment: it marks the
	// snapshot's set as kept from here on (browse_snapshot.lua), which a
	// first page after the fill would build in one call.
	browseAll()
	spec := engine.ListingSpec{Region: "eu", ProtocolVersion: 1, BuildVersion: "1", DisplayName: "x",
		Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 8}
	create := func(i int) engine.ListingView {
		v, r, err := s.CreateListing(ctx, engine.CreateListing{Tenant: tenant, Owner: engine.Subject("owner-" + strconv.Itoa(i/100)),
			IdempotencyKey: "k" + strconv.Itoa(i), Spec: spec})
		if err != nil || !r.OK() {
			t.Fatalf("CreateListing %d: %v %v", i, r.Outcome, err)
		}
		return v
	}
	presence := func(v engine.ListingView, seq uint64) engine.BindPresence {
		pc := k.Presence(v.Presence)
		return engine.BindPresence{Handle: v.Presence, Key: engine.FingerprintOf(&pc), Seq: seq, Public: netipAP("203.0.113.10:4000")}
	}
	cmds := make([]engine.CreateListing, n)
	for i := range cmds {
		cmds[i] = engine.CreateListing{Tenant: tenant, Owner: engine.Subject("owner-" + strconv.Itoa(i/100)),
			IdempotencyKey: "k" + strconv.Itoa(i), Spec: spec}
	}
	views, err := s.CreateListingsPipelined(ctx, cmds)
	if err != nil {
		t.Fatalf("filling %d listings: %v", n, err)
	}
	// Presence from several goroutines: the client pipelines their calls.
	const workers, batch = 8, 100
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ops := make([]engine.Op, 0, batch)
			for i := w * batch; i < n; i += workers * batch {
				ops = ops[:0]
				for j := i; j < min(i+batch, n); j++ {
					ops = append(ops, engine.Op{Kind: engine.OpPresence, Presence: presence(views[j], 1)})
				}
				if err := s.ApplyBatch(ctx, ops); err != nil {
					t.Errorf("ApplyBatch: %v", err)
					return
				}
				for _, op := range ops {
					if !op.Result.OK() {
						t.Errorf("presence: %v", op.Result.Outcome)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.Pools[engine.PoolPresence-1].Used != n {
		t.Fatalf("filled %d visible listings, want %d", st.Pools[engine.PoolPresence-1].Used, n)
	}

	work := map[string]map[string]int{}
	measure := func(name string, op func()) {
		t.Helper()
		if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
			t.Fatal(err)
		}
		op()
		info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		work[name] = commandCounts(t, info)
	}
	// The listing in the middle of the browse order (by ID; IDs are
	// random, so not the one created in the middle): a page after it is
	// full, at every size.
	byID := slices.Clone(views)
	slices.SortFunc(byID, func(x, y engine.ListingView) int { return strings.Compare(x.ID.String(), y.ID.String()) })
	mid := byID[n/2]
	var fresh engine.ListingView
	measure("CreateListing", func() { fresh = create(n) })
	measure("BindHostPresence", func() {
		if _, r, err := s.BindHostPresence(ctx, presence(fresh, 1)); err != nil || !r.OK() {
			t.Fatalf("BindHostPresence: %v %v", r.Outcome, err)
		}
	})
	measure("RenewLease", func() {
		lc := k.Lease(mid.Lease)
		if _, r, err := s.RenewLease(ctx, engine.RenewLease{Tenant: tenant, Owner: mid.Owner, Listing: mid.ID, Lease: mid.Lease,
			LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: 1, CurrentPlayers: 3}); err != nil || !r.OK() {
			t.Fatalf("RenewLease: %v %v", r.Outcome, err)
		}
	})
	measure("GetListing", func() {
		if _, r, err := s.GetListing(ctx, engine.GetListing{Tenant: tenant, Listing: mid.ID, Joinable: true}); err != nil || !r.OK() {
			t.Fatalf("GetListing: %v %v", r.Outcome, err)
		}
	})
	measure("BrowseVisible", func() {
		items, more, r, err := s.BrowseVisible(ctx, engine.Browse{Tenant: tenant, ProtocolVersion: 1, Region: "eu", After: mid.ID, HasAfter: true, Limit: 10}, nil)
		if err != nil || !r.OK() || len(items) != 10 || !more {
			t.Fatalf("BrowseVisible: %d items more=%v %v %v", len(items), more, r.Outcome, err)
		}
	})
	var a engine.AttemptView
	// The reads as the HTTP API makes them, each deciding its caller's
	// revocation in its one call; browse from the instance's index, brought
	// to the fill first (untimed: it rebuilds, reading the whole snapshot).
	browseAll()
	measure("BrowseItemsAs", func() {
		items, next, r, err := s.BrowseItemsAs(ctx, "reader", engine.Browse{Tenant: tenant, ProtocolVersion: 1, Region: "eu", After: mid.ID, HasAfter: true, Limit: 10}, nil)
		if err != nil || !r.OK() || len(items) != 10 || !next.More {
			t.Fatalf("BrowseItemsAs: %d items more=%v %v %v", len(items), next.More, r.Outcome, err)
		}
	})
	measure("GetListingAs", func() {
		if _, r, err := s.GetListingAs(ctx, "reader", engine.GetListing{Tenant: tenant, Listing: mid.ID, Joinable: true}); err != nil || !r.OK() {
			t.Fatalf("GetListingAs: %v %v", r.Outcome, err)
		}
	})
	measure("RevokedInTenant", func() {
		if revoked, err := s.RevokedInTenant(ctx, tenant, "reader"); err != nil || revoked {
			t.Fatalf("RevokedInTenant: %v %v", revoked, err)
		}
	})
	measure("CreateJoinAttempt", func() {
		var r engine.Result
		var err error
		a, r, err = s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: tenant, Client: "client", IdempotencyKey: "j", Listing: mid.ID, ProtocolVersion: 1})
		if err != nil || !r.OK() {
			t.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
		}
	})
	measure("ApplyBatch(bind host, bind client, presence)", func() {
		pc := k.Presence(mid.Presence)
		hc, cc := engine.HostAttemptCapability(&pc, a.Handle), k.AttemptClient(a.Handle)
		ops := []engine.Op{
			{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: a.Handle, Role: engine.RoleHost, Key: engine.FingerprintOf(&hc), Public: netipAP("203.0.113.10:4000")}},
			{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: a.Handle, Role: engine.RoleClient, Key: engine.FingerprintOf(&cc), Public: netipAP("198.51.100.20:5000")}},
			{Kind: engine.OpPresence, Presence: presence(mid, 2)},
		}
		if err := s.ApplyBatch(ctx, ops); err != nil || !ops[1].FirstIntro || !ops[2].Result.OK() {
			t.Fatalf("ApplyBatch: %v first=%v", err, ops[1].FirstIntro)
		}
	})
	b, r, err := s.CreateJoinAttempt(ctx, engine.CreateAttempt{Tenant: tenant, Client: "client", IdempotencyKey: "j2", Listing: mid.ID, ProtocolVersion: 1, RelayOnly: true})
	if err != nil || !r.OK() {
		t.Fatalf("CreateJoinAttempt: %v %v", r.Outcome, err)
	}
	measure("ApplyBatch(relayed binds of both sides, outcome report)", func() {
		pc := k.Presence(mid.Presence)
		hc, cc := engine.HostAttemptCapability(&pc, b.Handle), k.AttemptClient(b.Handle)
		hk := engine.FingerprintOf(&hc)
		ops := []engine.Op{
			{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: b.Handle, Role: engine.RoleHost, Key: hk, Public: netipAP("203.0.113.10:4000"), Relayed: netipAP("192.0.2.50:6002")}},
			{Kind: engine.OpBindAttempt, Bind: engine.BindAttempt{Handle: b.Handle, Role: engine.RoleClient, Key: engine.FingerprintOf(&cc), Public: netipAP("198.51.100.20:5000"), Relayed: netipAP("192.0.2.50:6001")}},
			{Kind: engine.OpOutcome, Report: engine.PunchReport{Handle: b.Handle, Role: engine.RoleHost, Key: hk, Path: engine.PathRelayed, ConnectMillis: 700}},
		}
		if err := s.ApplyBatch(ctx, ops); err != nil || !ops[1].FirstRelay || !ops[2].Result.OK() {
			t.Fatalf("ApplyBatch: %v first relay=%v", err, ops[1].FirstRelay)
		}
	})
	measure("AttemptStatus", func() {
		if st, r, err := s.AttemptStatus(ctx, engine.GetAttempt{Tenant: tenant, Subject: "client", Attempt: b.ID}); err != nil || !r.OK() || st.State != engine.AttemptRelayed {
			t.Fatalf("AttemptStatus: %v %v %v", st.State, r.Outcome, err)
		}
	})
	measure("AttemptStatusAs", func() {
		if st, r, err := s.AttemptStatusAs(ctx, engine.GetAttempt{Tenant: tenant, Subject: "client", Attempt: b.ID}); err != nil || !r.OK() || st.State != engine.AttemptRelayed {
			t.Fatalf("AttemptStatusAs: %v %v %v", st.State, r.Outcome, err)
		}
	})
	measure("ConsumeReplay", func() {
		if r, err := s.ConsumeReplay(ctx, engine.ConsumeReplay{Namespace: "n", Key: "k", Lifetime: time.Second}); err != nil || !r.OK() {
			t.Fatalf("ConsumeReplay: %v %v", r.Outcome, err)
		}
	})
	clock.Advance(time.Second)
	measure("Stats (expiring one replay ticket)", func() {
		if st := s.Stats(); st.Pools[engine.PoolReplay-1].Used != 0 {
			t.Fatalf("replay ticket not expired")
		}
	})
	measure("RevokeListing (cascade of one attempt)", func() {
		if r, err := s.RevokeListing(ctx, engine.RevokeListing{Tenant: tenant, Listing: mid.ID}); err != nil || !r.OK() {
			t.Fatalf("RevokeListing: %v %v", r.Outcome, err)
		}
	})
	return work
}

// functionCalls is how many FCALLs the server has run.
func functionCalls(t *testing.T, c rueidis.Client) int {
	t.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	return commandCounts(t, info)["fcall"]
}

// commandCounts parses INFO commandstats into calls per command, leaving
// out the test's own CONFIG and INFO and the client's idle-connection PING
// (no transition sends one, but one can land inside a measured window).
func commandCounts(t *testing.T, info string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok || name == "info" || name == "ping" || strings.HasPrefix(name, "config") {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		n, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		counts[name] = n
	}
	if len(counts) == 0 {
		t.Fatalf("no commandstats in %q", info)
	}
	return counts
}
