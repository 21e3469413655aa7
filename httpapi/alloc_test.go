//go:build !race

// The race detector makes sync.Pool drop items on purpose, so allocation
// counts are only meaningful without it.

package httpapi

import (
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

// A browse filter's region, once seen, becomes a string without allocating.
func TestInternerAllocations(t *testing.T) {
	in := newInterner(maxInternedRegions)
	region := []byte("eu-central")
	in.get(region)
	if n := testing.AllocsPerRun(100, func() {
		if in.get(region) != "eu-central" {
			t.Fatal("interned value")
		}
	}); n != 0 {
		t.Fatalf("get of an interned value allocates %.1f times", n)
	}
}
