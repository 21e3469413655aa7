package main

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/docs/contracts"
)

// TestE2EOpenAPITour drives every route and the common refusals through
// the client that checks each exchange against the OpenAPI description
// (startProc's client), so every status, header and body shape the binary
// answers here is one the description promises.
func TestE2EOpenAPITour(t *testing.T) {
	p := startProc(t)
	pub, cli, ops := p.tokens["publisher"], p.tokens["client"], p.tokens["operator"]

	r := p.call("GET", "/v1/openapi.json", "", nil)
	r.expect(t, "openapi.json", http.StatusOK, nil)
	if !bytes.Equal(r.body, contracts.OpenAPI) {
		t.Fatalf("GET /v1/openapi.json served %d bytes that are not docs/contracts/openapi.json", len(r.body))
	}
	p.call("GET", "/metrics", "", nil).expect(t, "metrics", http.StatusOK, nil)
	for _, tok := range []string{pub, cli, ops} {
		p.call("GET", "/v1/whoami", tok, nil).expect(t, "whoami", http.StatusOK, nil)
	}

	// Refusals before any operation runs.
	refused := func(what string, r httpReply, status int, code string) {
		t.Helper()
		if r.status != status || r.problemCode(t) != code {
			t.Fatalf("%s: %d %s, want %d %s", what, r.status, r.body, status, code)
		}
	}
	refused("no token", p.call("GET", "/v1/whoami", "", nil), http.StatusUnauthorized, "unauthorized")
	refused("unknown route", p.call("GET", "/v1/nowhere", cli, nil), http.StatusNotFound, "not_found")
	refused("wrong method", p.call("PATCH", "/v1/listings", cli, nil), http.StatusMethodNotAllowed, "method_not_allowed")
	refused("wrong method, public route", p.call("POST", "/livez", "", nil), http.StatusMethodNotAllowed, "method_not_allowed")
	refused("wrong role", p.call("POST", "/v1/listings", cli, listingBody("x"), "Idempotency-Key", "k"), http.StatusForbidden, "forbidden")
	refused("no idempotency key", p.call("POST", "/v1/listings", pub, listingBody("x")), http.StatusBadRequest, "invalid_request")
	refused("unknown member", p.call("POST", "/v1/listings", pub, map[string]any{"colour": "red"}, "Idempotency-Key", "k"),
		http.StatusBadRequest, "invalid_request")
	refused("text body", p.call("POST", "/v1/listings", pub, nil, "Idempotency-Key", "k", "Content-Type", "text/plain"),
		http.StatusUnsupportedMediaType, "unsupported_media_type")
	refused("large body", p.call("POST", "/v1/admin/revocations", ops, map[string]any{"subject": strings.Repeat("s", 17<<10), "ttl_s": 1}),
		http.StatusRequestEntityTooLarge, "payload_too_large")
	refused("malformed ID", p.call("GET", "/v1/listings/not-a-uuid", cli, nil), http.StatusBadRequest, "invalid_request")
	refused("bad query", p.call("GET", "/v1/listings?protocol_version=7&colour=red", cli, nil), http.StatusBadRequest, "invalid_request")

	// The listing's life: publish, replay, conflicting reuse, browse, get,
	// join, renew, stale renew, delete.
	h := publishHost(t, p, "tour-1", "Tour host")
	id := h.pub.ListingID
	p.call("POST", "/v1/listings", pub, listingBody("Tour host"), "Idempotency-Key", "tour-1").expect(t, "replay", http.StatusOK, nil)
	refused("key reuse", p.call("POST", "/v1/listings", pub, listingBody("Other"), "Idempotency-Key", "tour-1"), http.StatusConflict, "conflict")
	p.call("GET", "/v1/listings?protocol_version=7&region=eu-central&limit=1", cli, nil).expect(t, "browse", http.StatusOK, nil)
	p.call("GET", "/v1/listings/"+id, pub, nil).expect(t, "get", http.StatusOK, nil)
	j := p.join("tour-join-1", id)
	h.offered(mustHandle(t, j.Handle))
	p.call("POST", "/v1/listings/"+id+"/join-attempts", cli, map[string]any{"protocol_version": 7}, "Idempotency-Key", "tour-join-1").
		expect(t, "join replay", http.StatusOK, nil)
	renew := map[string]any{"lease_id": h.pub.Lease.LeaseID, "lease_token": h.pub.Lease.Token, "expected_version": 1, "current_players": 2}
	p.call("PUT", "/v1/listings/"+id+"/lease", pub, renew).expect(t, "renew", http.StatusOK, nil)
	refused("stale renew", p.call("PUT", "/v1/listings/"+id+"/lease", pub, renew), http.StatusConflict, "conflict")
	refused("wrong lease token", p.call("DELETE", "/v1/listings/"+id, pub, nil, "Lease-Id", h.pub.Lease.LeaseID, "Lease-Token", "nope"),
		http.StatusNotFound, "not_found")
	p.call("DELETE", "/v1/listings/"+id, pub, nil, "Lease-Id", h.pub.Lease.LeaseID, "Lease-Token", h.pub.Lease.Token).
		expect(t, "delete", http.StatusNoContent, nil)
	refused("replay after delete", p.call("POST", "/v1/listings", pub, listingBody("Tour host"), "Idempotency-Key", "tour-1"),
		http.StatusGone, "expired")

	// Operator routes, then drain.
	h2 := publishHost(t, p, "tour-2", "Tour host 2")
	p.call("GET", "/v1/admin/stats", ops, nil).expect(t, "stats", http.StatusOK, nil)
	p.call("DELETE", "/v1/admin/listings/"+h2.pub.ListingID, ops, nil).expect(t, "revoke listing", http.StatusNoContent, nil)
	p.call("POST", "/v1/admin/revocations", ops, map[string]any{"subject": "dev-client", "ttl_s": 60}).
		expect(t, "revoke principal", http.StatusOK, nil)
	refused("revoked", p.call("GET", "/v1/whoami", cli, nil), http.StatusForbidden, "revoked")
	p.call("POST", "/v1/admin/drain", ops, nil).expect(t, "drain", http.StatusAccepted, nil)
	p.call("GET", "/readyz", "", nil).expect(t, "readyz while draining", http.StatusServiceUnavailable, nil)
	refused("publish while draining", p.call("POST", "/v1/listings", pub, listingBody("late"), "Idempotency-Key", "tour-3"),
		http.StatusServiceUnavailable, "draining")
}
