package client

import (
	"errors"
	"testing"
)

func TestAPIErrorIs(t *testing.T) {
	f := func(code string, want ...error) {
		t.Helper()
		e := &APIError{Op: "x", Status: 400, Code: code}
		for _, w := range want {
			if !errors.Is(e, w) {
				t.Fatalf("%s does not match %v", code, w)
			}
		}
		if errors.Is(e, ErrPunchFailed) {
			t.Fatalf("%s matches an unrelated sentinel", code)
		}
	}
	f("not_found", ErrNotFound)
	f("expired", ErrExpired)
	f("revoked", ErrRevoked)
	f("conflict", ErrConflict)
	f("replay_rejected", ErrReplayRejected)
	f("capacity_exceeded", ErrCapacityExceeded)
	f("quota_exceeded", ErrQuotaExceeded, ErrCapacityExceeded)
	f("draining", ErrDraining)
	f("service_unavailable", ErrServiceUnavailable)
	f("invalid_request", ErrInvalidRequest)
	f("unauthorized", ErrUnauthorized)
	f("forbidden", ErrForbidden)
	if errors.Is(&APIError{Code: "draining"}, ErrServiceUnavailable) {
		t.Fatal("draining must not read as service_unavailable over HTTP")
	}
}

func TestMediatorErrorIs(t *testing.T) {
	f := func(code int, want error) {
		t.Helper()
		if !errors.Is(&MediatorError{Op: "bind", Code: code}, want) {
			t.Fatalf("%d does not match %v", code, want)
		}
	}
	f(400, ErrInvalidRequest)
	f(401, ErrUnauthorized)
	f(403, ErrRevoked)
	f(404, ErrNotFound)
	f(409, ErrConflict)
	f(503, ErrDraining)
	f(508, ErrCapacityExceeded)
	if errors.Is(&MediatorError{Code: 404}, ErrConflict) {
		t.Fatal("404 matched conflict")
	}
}

func TestPunchErrorIs(t *testing.T) {
	var err error = &PunchError{}
	if !errors.Is(err, ErrPunchFailed) {
		t.Fatal("PunchError must match ErrPunchFailed")
	}
}

func TestBackoffBounded(t *testing.T) {
	b := Backoff{Min: 10, Max: 80, Attempts: 6}
	n := 0
	for {
		d, ok := b.Next()
		if !ok {
			break
		}
		if d < 5 || d > 80 {
			t.Fatalf("wait %v outside [Min/2, Max]", d)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("%d waits for 6 attempts, want 5", n)
	}
}

func TestTransient(t *testing.T) {
	f := func(err error, want bool) {
		t.Helper()
		if transient(err) != want {
			t.Fatalf("transient(%v) = %v", err, !want)
		}
	}
	f(&transportError{op: "renew lease", err: errors.New("connection refused")}, true)
	f(&APIError{Code: "service_unavailable"}, true)
	f(&APIError{Code: "capacity_exceeded"}, true)
	f(&APIError{Code: "draining"}, false)
	f(&APIError{Code: "not_found"}, false)
	f(&ProtocolError{}, false)
}
