package httpapi

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/rendezvous/rendezvous/engine"
)

// viewsOnly hides a store's engine.ItemBrowser, so an API over it takes the
// BrowseVisible path.
type viewsOnly struct{ engine.Store }

// TestBrowseItemsMatchViews: browse through engine.ItemBrowser answers with
// exactly the bytes of the ListingView path, for listings with and without
// a stored document, live player counts, regions, cursors and limits.
func TestBrowseItemsMatchViews(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	views := d.fill(t, 40, 100)
	// Listings stored without a document are encoded from their spec.
	for i := range 5 {
		spec := engine.ListingSpec{Region: "us-east", ProtocolVersion: 7, BuildVersion: "2.0", DisplayName: "No doc \"q\"",
			Visibility: engine.Public, TrustMode: engine.PlayerHosted, MaxPlayers: 4,
			Metadata: []engine.MetaEntry{{Key: "k", Value: "v\u00e9"}}}
		v, r, err := d.store.CreateListing(context.Background(), engine.CreateListing{Tenant: testTenant, Owner: "pub-1",
			IdempotencyKey: "nodoc-" + string(rune('a'+i)), Spec: spec})
		if err != nil || !r.OK() {
			t.Fatalf("create: %v %v", r.Outcome, err)
		}
		pc := d.keys.Presence(v.Presence)
		if _, r, err = d.store.BindHostPresence(context.Background(), engine.BindPresence{Handle: v.Presence,
			Key: engine.FingerprintOf(&pc), Seq: 1, Public: netip.MustParseAddrPort("198.51.100.9:4000")}); err != nil || !r.OK() {
			t.Fatalf("presence: %v %v", r.Outcome, err)
		}
		d.clock.Advance(3337 * time.Millisecond) // deadlines in different seconds and milliseconds
	}
	// Live counts differ from the spec's.
	for i := range 10 {
		v := &views[i]
		lc := d.keys.Lease(v.Lease)
		if _, r, err := d.store.RenewLease(context.Background(), engine.RenewLease{Tenant: testTenant, Owner: v.Owner,
			Listing: v.ID, Lease: v.Lease, LeaseKey: engine.FingerprintOf(&lc), ExpectedVersion: v.Version, CurrentPlayers: i % 9}); err != nil || !r.OK() {
			t.Fatalf("renew: %v %v", r.Outcome, err)
		}
	}
	plain, err := New(Config{Store: viewsOnly{d.store}, Keys: d.keys, Limits: engine.DefaultLimits(),
		Principals: testPrincipals(t), Metrics: metrics.NewSet()})
	if err != nil {
		t.Fatal(err)
	}
	if d.api.items == nil || plain.items != nil {
		t.Fatalf("item browser not detected (%v) or not hidden (%v)", d.api.items != nil, plain.items != nil)
	}
	f := func(query string) {
		t.Helper()
		a := newCtx("GET", "/v1/listings?"+query, tokCli)
		b := newCtx("GET", "/v1/listings?"+query, tokCli)
		d.api.Handler(a)
		plain.Handler(b)
		if a.Response.StatusCode() != b.Response.StatusCode() || !bytes.Equal(a.Response.Body(), b.Response.Body()) {
			t.Fatalf("%s:\nitems: %d %s\nviews: %d %s", query, a.Response.StatusCode(), a.Response.Body(),
				b.Response.StatusCode(), b.Response.Body())
		}
	}
	f("protocol_version=7&limit=100")
	f("protocol_version=7&limit=3")
	f("protocol_version=7&region=us-east")
	f("protocol_version=7&region=eu-central&limit=7&after=" + views[3].ID.String())
	f("protocol_version=7&after=ffffffff-ffff-ffff-ffff-ffffffffffff")
	f("protocol_version=8")
	f("protocol_version=7&limit=0")
	f("protocol_version=7&region=EU")
}

// minuteCache formats exactly as appendTime, across second, minute, day
// and year boundaries, with a cold or warm cache, and outside its range.
func TestMinuteCache(t *testing.T) {
	var c minuteCache
	f := func(ms int64) {
		t.Helper()
		want := appendTime(nil, time.UnixMilli(ms))
		if got := c.append(nil, ms); !bytes.Equal(got, want) {
			t.Fatalf("%d: %s, want %s", ms, got, want)
		}
	}
	base := time.Date(2026, 12, 31, 23, 59, 58, 0, time.UTC).UnixMilli()
	for _, ms := range []int64{0, 1, 59999, 60000, base, base + 999, base + 1000, base + 1999, base + 2000, base + 61001,
		base - 60000, maxFastMilli - 1, maxFastMilli, maxFastMilli + 60000, -1, -60001} {
		f(ms)
	}
	r := rand.New(rand.NewPCG(5, 6))
	ms := base
	for range 20000 {
		switch r.IntN(4) {
		case 0:
			ms += r.Int64N(1000)
		case 1:
			ms += r.Int64N(120000) - 60000
		case 2:
			ms = r.Int64N(maxFastMilli)
		default:
			ms += r.Int64N(1e9)
		}
		f(ms)
	}
}
