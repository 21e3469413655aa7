//go:build !race

// The race detector makes sync.Pool drop items on purpose, so allocation
// counts are only meaningful without it.

package httpapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestHandlerAllocations(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	views := d.fill(t, 150, 100)

	browse := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central&limit=100", tokCli)
	d.api.Handler(browse)
	if browse.Response.StatusCode() != 200 || len(browse.Response.Body()) < 100*200 {
		t.Fatalf("browse: %d %s", browse.Response.StatusCode(), browse.Response.Body())
	}
	if n := testing.AllocsPerRun(200, func() {
		browse.Response.Reset()
		d.api.Handler(browse)
	}); n != 0 {
		t.Fatalf("browse allocates %.1f times per request", n)
	}

	// pub-1 owns the first 100 listings.
	v := &views[0]
	lc := d.keys.Lease(v.Lease)
	tok := lc.AppendToken(nil)
	renew := newCtx("PUT", "/v1/listings/"+v.ID.String()+"/lease", tokPub)
	renew.Request.Header.SetContentType("application/json")
	var body []byte
	version := uint64(1)
	step := func() {
		body = renewBody(body, v, tok, version)
		renew.Request.SetBody(body)
		renew.Response.Reset()
		d.api.Handler(renew)
		if renew.Response.StatusCode() != 200 {
			t.Fatalf("renew: %d %s", renew.Response.StatusCode(), renew.Response.Body())
		}
		version++
	}
	step()
	if n := testing.AllocsPerRun(200, step); n != 0 {
		t.Fatalf("renew allocates %.1f times per request", n)
	}

	get := newCtx("GET", "/v1/listings/"+v.ID.String(), tokCli)
	d.api.Handler(get)
	if get.Response.StatusCode() != 200 {
		t.Fatalf("get: %d %s", get.Response.StatusCode(), get.Response.Body())
	}
	if n := testing.AllocsPerRun(200, func() {
		get.Response.Reset()
		d.api.Handler(get)
	}); n != 0 {
		t.Fatalf("get allocates %.1f times per request", n)
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

	browse := newCtx("GET", "/v1/listings?protocol_version=7&region=eu-central", tokCli)
	d.api.Handler(browse) // finds listings: the region is real
	if browse.Response.StatusCode() != 200 || !strings.Contains(string(browse.Response.Body()), `"region":"eu-central"`) {
		t.Fatalf("browse: %d %s", browse.Response.StatusCode(), browse.Response.Body())
	}
	if n := testing.AllocsPerRun(100, func() {
		browse.Response.Reset()
		d.api.Handler(browse)
	}); n != 0 {
		t.Fatalf("a real region's browse allocates %.1f times after a flood of made-up ones", n)
	}
}
