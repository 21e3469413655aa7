package httpapi

import (
	"testing"
	"unsafe"

	"github.com/rendezvous/rendezvous/engine"
)

func TestRegionInterner(t *testing.T) {
	in := newRegionInterner(2)
	a, b := engine.Tenant{Game: "a", Env: "x"}, engine.Tenant{Game: "b", Env: "x"}
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	has := func(tn engine.Tenant, s string) bool {
		_, ok, _ := in.lookup(tn, []byte(s))
		return ok
	}
	eu := in.add(a, string([]byte("eu")))
	if got, ok, _ := in.lookup(a, []byte("eu")); !ok || !same(got, eu) || !same(in.add(a, "eu"), eu) {
		t.Fatal("a seen region is not returned as its one interned copy")
	}
	// Tenants do not share tables.
	if has(b, "eu") {
		t.Fatal("one tenant's region is interned for another")
	}
	// Two generations of two: a third region retires the first generation,
	// which still answers; a fourth region retires the oldest for good,
	// except what was seen again in the meantime.
	in.add(a, "us")
	in.add(a, "ap")
	if !has(a, "eu") || !has(a, "us") || !has(a, "ap") {
		t.Fatal("the previous generation no longer answers")
	}
	if !same(in.add(a, "eu"), eu) { // seen again: back in the current generation
		t.Fatal("a region moved between generations lost its copy")
	}
	in.add(a, "sa")
	if has(a, "us") || !has(a, "eu") || !has(a, "ap") || !has(a, "sa") {
		t.Fatal("rotation kept or dropped the wrong regions")
	}
	for _, tn := range []engine.Tenant{a, b} {
		if tb := in.tenants[tn]; tb != nil && (len(tb.cur) > 2 || len(tb.prev) > 2) {
			t.Fatalf("tenant %v holds %d+%d regions, bound 2+2", tn, len(tb.cur), len(tb.prev))
		}
	}
}
