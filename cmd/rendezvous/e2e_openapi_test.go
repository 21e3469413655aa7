package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/docs/contracts"
	"github.com/rendezvous/rendezvous/httpapi"
)

// TestE2EOpenAPITour drives every route (HEAD included) and the common
// refusals through the client that checks each exchange against the
// OpenAPI description (startProc's client), so every status, header and
// body shape the binary answers here is one the description promises.
// (408 is left to the slow-connection tests: it takes the 10 s read
// timeout.)
func TestE2EOpenAPITour(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		pub, cli, ops, gop := p.tokens["publisher"], p.tokens["client"], p.tokens["operator"], p.tokens[httpapi.DevGlobalOperator]

		r := p.call("GET", "/v1/openapi.json", "", nil)
		r.expect(t, "openapi.json", http.StatusOK, nil)
		if !bytes.Equal(r.body, contracts.OpenAPI) {
			t.Fatalf("GET /v1/openapi.json served %d bytes that are not docs/contracts/openapi.json", len(r.body))
		}
		p.call("GET", "/metrics", gop, nil).expect(t, "metrics", http.StatusOK, nil)
		p.call("GET", "/metrics", "", nil).expect(t, "metrics without a token", http.StatusUnauthorized, nil)
		p.call("GET", "/metrics", ops, nil).expect(t, "metrics for a tenant operator", http.StatusForbidden, nil)
		for _, tok := range []string{pub, cli, ops, gop} {
			p.call("GET", "/v1/whoami", tok, nil).expect(t, "whoami", http.StatusOK, nil)
		}
		// HEAD answers as GET: the same status and headers, no body.
		headLikeGet := func(path, tok string) {
			t.Helper()
			get, head := p.call("GET", path, tok, nil), p.call("HEAD", path, tok, nil)
			if head.status != get.status || head.header.Get("Content-Type") != get.header.Get("Content-Type") ||
				head.header.Get("Content-Length") != strconv.Itoa(len(get.body)) || len(head.body) != 0 {
				t.Fatalf("HEAD %s: %d %v, %d body bytes; GET: %d %v, %d body bytes",
					path, head.status, head.header, len(head.body), get.status, get.header, len(get.body))
			}
		}
		headLikeGet("/livez", "")
		headLikeGet("/readyz", "")
		headLikeGet("/v1/openapi.json", "")
		headLikeGet("/v1/whoami", cli)
		headLikeGet("/v1/admin/stats", ops) // 403 for a tenant operator
		if r := p.call("HEAD", "/metrics", gop, nil); r.status != http.StatusOK || len(r.body) != 0 {
			t.Fatalf("HEAD /metrics: %d, %d body bytes", r.status, len(r.body))
		}

		// Refusals before any operation runs (code "": an answer to HEAD, which
		// has no body to read the code from).
		refused := func(what string, r httpReply, status int, code string) {
			t.Helper()
			if r.status != status || code != "" && r.problemCode(t) != code {
				t.Fatalf("%s: %d %s, want %d %s", what, r.status, r.body, status, code)
			}
		}
		refused("no token", p.call("GET", "/v1/whoami", "", nil), http.StatusUnauthorized, "unauthorized")
		refused("unknown route", p.call("GET", "/v1/nowhere", cli, nil), http.StatusNotFound, "not_found")
		refused("wrong method", p.call("PATCH", "/v1/listings", cli, nil), http.StatusMethodNotAllowed, "method_not_allowed")
		refused("wrong method, public route", p.call("POST", "/livez", "", nil), http.StatusMethodNotAllowed, "method_not_allowed")
		refused("HEAD on a route without GET", p.call("HEAD", "/v1/admin/principals/reload", gop, nil), http.StatusMethodNotAllowed, "")
		refused("GET on reload", p.call("GET", "/v1/admin/principals/reload", gop, nil), http.StatusMethodNotAllowed, "method_not_allowed")
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
		headLikeGet("/v1/listings?protocol_version=7&region=eu-central&limit=1", cli)
		headLikeGet("/v1/listings/"+id, cli)
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

		// Operator routes, then drain. The tenant operator reads its tenant and
		// is refused the instance routes and other tenants; the global operator
		// names the tenant and has the instance routes.
		h2 := publishHost(t, p, "tour-2", "Tour host 2")
		p.call("GET", "/v1/admin/tenant-stats", ops, nil).expect(t, "tenant stats", http.StatusOK, nil)
		p.call("GET", "/v1/admin/tenant-stats?game_id=demo&environment_id=dev", ops, nil).expect(t, "own tenant stats, named", http.StatusOK, nil)
		p.call("GET", "/v1/admin/tenant-stats?game_id=other&environment_id=dev", gop, nil).expect(t, "empty tenant's stats", http.StatusOK, nil)
		headLikeGet("/v1/admin/tenant-stats?game_id=demo&environment_id=dev", gop)
		refused("another tenant's stats", p.call("GET", "/v1/admin/tenant-stats?game_id=other&environment_id=dev", ops, nil),
			http.StatusForbidden, "forbidden")
		refused("tenant stats unnamed", p.call("GET", "/v1/admin/tenant-stats", gop, nil), http.StatusBadRequest, "invalid_request")
		refused("tenant stats half named", p.call("GET", "/v1/admin/tenant-stats?game_id=demo", gop, nil), http.StatusBadRequest, "invalid_request")
		refused("tenant stats, unknown parameter", p.call("GET", "/v1/admin/tenant-stats?tenant=demo", ops, nil), http.StatusBadRequest, "invalid_request")
		refused("tenant stats, a client", p.call("GET", "/v1/admin/tenant-stats", cli, nil), http.StatusForbidden, "forbidden")
		for _, c := range []struct{ method, path string }{{"GET", "/v1/admin/stats"}, {"POST", "/v1/admin/drain"}, {"POST", "/v1/admin/principals/reload"}} {
			refused("tenant operator "+c.method+" "+c.path, p.call(c.method, c.path, ops, nil), http.StatusForbidden, "forbidden")
		}
		refused("reload without a principals file", p.call("POST", "/v1/admin/principals/reload", gop, nil), http.StatusConflict, "not_reloadable")
		p.call("GET", "/v1/admin/stats", gop, nil).expect(t, "stats", http.StatusOK, nil)
		// The stats carry their age (age_ms), which moves between two
		// requests, and the body's length with it: HEAD answers as GET but
		// for the length.
		if get, head := p.call("GET", "/v1/admin/stats", gop, nil), p.call("HEAD", "/v1/admin/stats", gop, nil); head.status != get.status ||
			head.header.Get("Content-Type") != get.header.Get("Content-Type") || head.header.Get("Content-Length") == "" || len(head.body) != 0 {
			t.Fatalf("HEAD /v1/admin/stats: %d %v, %d body bytes; GET: %d %v", head.status, head.header, len(head.body), get.status, get.header)
		}
		p.call("DELETE", "/v1/admin/listings/"+h2.pub.ListingID, ops, nil).expect(t, "revoke listing", http.StatusNoContent, nil)
		p.call("POST", "/v1/admin/revocations", ops, map[string]any{"subject": "dev-client", "ttl_s": 60}).
			expect(t, "revoke principal", http.StatusOK, nil)
		refused("revoked", p.call("GET", "/v1/whoami", cli, nil), http.StatusForbidden, "revoked")
		// A join decides revocation in its own store call; an answer it would
		// give otherwise (400, draining) still loses to 403 revoked.
		revokedJoin := func(what string, body map[string]any) {
			t.Helper()
			refused(what, p.call("POST", "/v1/listings/"+h2.pub.ListingID+"/join-attempts", cli, body, "Idempotency-Key", "tour-join-2"),
				http.StatusForbidden, "revoked")
		}
		revokedJoin("revoked join", map[string]any{"protocol_version": 7})
		revokedJoin("revoked join, unknown member", map[string]any{"colour": "red"})
		p.call("POST", "/v1/admin/drain", gop, nil).expect(t, "drain", http.StatusAccepted, nil)
		revokedJoin("revoked join while draining", map[string]any{"protocol_version": 7})
		p.call("GET", "/readyz", "", nil).expect(t, "readyz while draining", http.StatusServiceUnavailable, nil)
		refused("publish while draining", p.call("POST", "/v1/listings", pub, listingBody("late"), "Idempotency-Key", "tour-3"),
			http.StatusServiceUnavailable, "draining")

		// The principals reload of a server with a principals file: 200, and
		// 422 for a file that does not load.
		file := filepath.Join(t.TempDir(), "principals.json")
		writeReloadPrincipals(t, file, "pub-1", "gop")
		pf := startProc(t, append(storeArgs, "--principals", file)...)
		var loaded struct{ Loaded int }
		pf.call("POST", "/v1/admin/principals/reload", reloadTokens["gop"], nil).expect(t, "reload", http.StatusOK, &loaded)
		if loaded.Loaded != 2 {
			t.Fatalf("reload loaded %d principals, want 2", loaded.Loaded)
		}
		writeRaw(t, file, `{"principals":[]}`)
		refused("reload of a bad file", pf.call("POST", "/v1/admin/principals/reload", reloadTokens["gop"], nil),
			http.StatusUnprocessableEntity, "principals_invalid")
	})
}
