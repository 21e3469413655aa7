package main

import "testing"

func TestHTTPCode(t *testing.T) {
	f := func(status int, problem string, want Code) {
		t.Helper()
		if got := httpCode(status, problem); got != want {
			t.Fatalf("httpCode(%d, %q) = %s, want %s", status, problem, got, want)
		}
	}
	for _, status := range []int{200, 201, 204} {
		f(status, "", CodeOK)
	}
	// A typed problem maps to the Code of the same name.
	for _, c := range []struct {
		status int
		want   Code
	}{{503, CodeCapacity}, {429, CodeQuota}, {503, CodeDraining}, {503, CodeUnavailable}, {404, CodeNotFound},
		{410, CodeExpired}, {409, CodeConflict}, {403, CodeRevoked}, {403, CodeForbidden}, {401, CodeUnauthorized}} {
		f(c.status, c.want.String(), c.want)
	}
	f(400, "invalid_request", CodeBadRequest)
	f(503, "", CodeUnavailable)
	f(429, "", CodeOtherStatus) // a 429 without the typed code is not a typed shed
	f(500, "", CodeOtherStatus)
}

func TestCodeClass(t *testing.T) {
	for c := Code(0); c < numCodes; c++ {
		want := ClassError
		switch c {
		case CodeOK:
			want = ClassOK
		case CodeCapacity, CodeQuota, CodeStun508:
			want = ClassShed
		}
		if c.Class() != want {
			t.Fatalf("%s class %s, want %s", c, c.Class(), want)
		}
		if c.String() == "unknown" {
			t.Fatalf("code %d has no name", c)
		}
	}
	if stunCode(508) != CodeStun508 || stunCode(0) != CodeOK || stunCode(401) != CodeUnauthorized || stunCode(599) != CodeOtherStatus {
		t.Fatal("stunCode mapping wrong")
	}
	for k := Kind(0); k < numKinds; k++ {
		if got, ok := parseKind(k.String()); !ok || got != k {
			t.Fatalf("parseKind(%s) = %v, %v", k, got, ok)
		}
	}
	if _, ok := parseKind("nope"); ok {
		t.Fatal("parseKind accepted an unknown kind")
	}
}
