package memstore

import (
	"net/netip"
	"reflect"
	"testing"
	"time"
	"unsafe"
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
	for _, v := range []any{listingRec{}, attemptRec{}, link{}, heapItem{}, setEntry{}, expNode{}, uuidEntry{}} {
		if !walk(reflect.TypeOf(v)) {
			t.Errorf("%T holds pointers", v)
		}
	}
}

// listingRec's fields are placed by cache line (see its comment); a field
// added in the wrong place would silently spread a heartbeat over more lines.
func TestListingRecordLayout(t *testing.T) {
	var l listingRec
	f := func(name string, got, want uintptr) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
	f("size", unsafe.Sizeof(l), 192)
	f("offset of fresh (line 1)", unsafe.Offsetof(l.fresh), 64)
	f("end of proto (line 1)", unsafe.Offsetof(l.proto)+unsafe.Sizeof(l.proto), 128)
	f("offset of leaseKey (line 2)", unsafe.Offsetof(l.leaseKey), 128)
	f("expiry node size", unsafe.Sizeof(expNode{}), 16)
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
	if packEndpoint(netip.AddrPort{}) != zero || zero.addrPort().IsValid() || zero.valid() {
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

// wallMilli agrees with wall(d).UnixMilli() on both sides of the origins.
func TestWallMilli(t *testing.T) {
	f := newFx(t, nil)
	s := f.s
	for _, d := range []time.Duration{0, 1, 999_999, 1_000_000, -1, -999_999, -1_000_000, -1_000_001,
		s.monoOrigin, s.monoOrigin - 1, 60 * time.Second, 90*time.Hour + 123_456_789, -90*time.Hour - 7} {
		if got, want := s.wallMilli(d), s.wall(d).UnixMilli(); got != want {
			t.Errorf("wallMilli(%v) = %d, want %d", d, got, want)
		}
	}
	s.wallOrigin = time.Unix(0, 500_000) // wall times just after and before 1970
	s.wallNanos = s.wallOrigin.UnixNano() - int64(s.monoOrigin)
	for _, d := range []time.Duration{s.monoOrigin, s.monoOrigin - 1, s.monoOrigin - 500_000, s.monoOrigin - 500_001, s.monoOrigin - 3_000_001} {
		if got, want := s.wallMilli(d), s.wall(d).UnixMilli(); got != want {
			t.Errorf("near 1970: wallMilli(%v) = %d, want %d", d, got, want)
		}
	}
}
