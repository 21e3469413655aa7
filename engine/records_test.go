package engine

import (
	"net/netip"
	"reflect"
	"testing"
)

// The listing and attempt slabs must stay pointer-free so the GC never scans
// them, however many records are live.
func TestRecordsPointerFree(t *testing.T) {
	var walk func(reflect.Type) bool
	walk = func(ty reflect.Type) bool {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Interface,
			reflect.Chan, reflect.Func, reflect.UnsafePointer:
			return false
		case reflect.Array:
			return walk(ty.Elem())
		case reflect.Struct:
			for i := 0; i < ty.NumField(); i++ {
				if !walk(ty.Field(i).Type) {
					t.Logf("%v.%s holds a pointer", ty, ty.Field(i).Name)
					return false
				}
			}
		}
		return true
	}
	for _, v := range []any{listingRec{}, attemptRec{}, link{}, heapItem{}, setEntry{}} {
		if !walk(reflect.TypeOf(v)) {
			t.Errorf("%T holds pointers", v)
		}
	}
}

func TestEndpointPacking(t *testing.T) {
	f := func(s string) {
		t.Helper()
		ap := mustAddrPort(t, s)
		if got := packEndpoint(ap).addrPort(); got != ap {
			t.Fatalf("round trip of %v = %v", ap, got)
		}
	}
	f("203.0.113.10:40000")
	f("[2001:db8::1]:3478")
	f("[::ffff:192.0.2.1]:1") // IPv4-mapped IPv6 stays IPv6
	f("[::1]:65535")
	if packEndpoint(mustAddrPort(t, "1.2.3.4:5")) == packEndpoint(mustAddrPort(t, "[::ffff:1.2.3.4]:5")) {
		t.Fatalf("IPv4 and IPv4-mapped IPv6 pack equal")
	}
	var zero endpoint
	if packEndpoint(zeroAddrPort) != zero || zero.addrPort().IsValid() || zero.valid() {
		t.Fatalf("zero endpoint not absent")
	}
}

func mustAddrPort(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return ap
}
