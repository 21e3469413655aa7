//go:build !race

// The race detector makes sync.Pool drop items on purpose, so allocation
// counts are only meaningful without it.

package httpapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

func TestHandlerAllocations(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	views := d.fill(t, 150, 100)

	browse := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central&limit=100", tokCli)
	wantServedFree(t, d, "browse", browse)
	if len(browse.Response.Body()) < 100*200 {
		t.Fatalf("browse: %s", browse.Response.Body())
	}

	// pub-1 owns the first 100 listings.
	v := &views[0]
	renew := d.renewer(v)
	step := func() {
		if ctx := renew(); ctx.Response.StatusCode() != 200 {
			t.Fatalf("renew: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("renew allocates %.1f times per request", n)
	}

	wantServedFree(t, d, "get", newCtx("GET", "/v1/listings/"+v.ID.String(), tokCli))
}

// wantServedFree serves ctx, which must answer 200, then requires serving
// it again to allocate nothing.
func wantServedFree(t *testing.T, d *direct, name string, ctx *fasthttp.RequestCtx) {
	t.Helper()
	d.api.Handler(ctx)
	if ctx.Response.StatusCode() != 200 {
		t.Fatalf("%s: %d %s", name, ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if n := testing.AllocsPerRun(200, func() {
		ctx.Response.Reset()
		d.api.Handler(ctx)
	}); n != 0 {
		t.Fatalf("%s allocates %.1f times per request", name, n)
	}
}

// A region interned for a tenant becomes a string without allocating.
func TestInternerAllocations(t *testing.T) {
	in := newRegionInterner(maxRegionsPerTenant)
	in.add(testTenant, "eu-central")
	region := []byte("eu-central")
	if n := testing.AllocsPerRun(100, func() {
		if s, ok, _ := in.lookup(testTenant, region); !ok || s != "eu-central" {
			t.Fatal("interned value")
		}
	}); n != 0 {
		t.Fatalf("lookup of an interned value allocates %.1f times", n)
	}
}

// Made-up regions, browsed by another tenant's clients or published by its
// publishers, never take the fast path from a tenant's real regions: a
// browse of a region with live listings stays free of allocations.
func TestMadeUpRegionsDoNotCrowdOutRealOnes(t *testing.T) {
	l := engine.DefaultLimits()
	l.OwnerListingQuota = 3 * maxRegionsPerTenant
	d := newDirect(t, l)
	d.fill(t, 20, 100) // demo/dev listings in eu-central, straight through the store

	for i := range 5 * maxRegionsPerTenant {
		ctx := newCtx("GET", "/v1/listings?protocol_version=7&region=made-up-"+strconv.Itoa(i), tokOtherCli)
		d.api.Handler(ctx)
		if ctx.Response.StatusCode() != 200 {
			t.Fatalf("made-up browse: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	for i := range 2*maxRegionsPerTenant + 1 {
		ctx := newCtx("POST", "/v1/listings", tokOtherPub)
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.Header.Set("Idempotency-Key", "made-up-"+strconv.Itoa(i))
		ctx.Request.SetBodyString(`{"region":"fake-` + strconv.Itoa(i) + `","protocol_version":7,"build_version":"1",
			"display_name":"x","visibility":"public","trust_mode":"managed_dedicated","current_players":0,"max_players":2}`)
		d.api.Handler(ctx)
		if ctx.Response.StatusCode() != 201 {
			t.Fatalf("made-up create %d: %d %s", i, ctx.Response.StatusCode(), ctx.Response.Body())
		}
	}
	// A browse of a made-up region found nothing and was not interned.
	if _, ok, _ := d.api.regions.lookup(engine.Tenant{Game: "other", Env: "dev"}, []byte("made-up-1")); ok {
		t.Fatal("a region no listing has was interned")
	}

	// A browse that finds listings: the region is real.
	browse := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central", tokCli)
	wantServedFree(t, d, "a real region's browse after a flood of made-up ones", browse)
	if !strings.Contains(string(browse.Response.Body()), `"region":"eu-central"`) {
		t.Fatalf("browse: %s", browse.Response.Body())
	}
}
