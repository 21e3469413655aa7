package httpapi

import (
	"strconv"
	"strings"
	"testing"
)

// Error precedence (docs/contracts/http.md#error-precedence): 413 -> 401 ->
// 404/405 -> 403 -> 415 -> 400.
func TestPrecedence(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	big := `{"region":"` + strings.Repeat("a", MaxBodySize) + `"}`
	var r *response
	f := func(q req, status int, code string) {
		t.Helper()
		h.rejected(q, status, code)
	}
	// 401: missing, malformed or unknown credentials, on every route but health.
	f(req{method: "GET", path: "/v1/whoami"}, 401, "unauthorized")
	f(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "Basic " + tokPub}}, 401, "unauthorized")
	f(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "Bearer"}}, 401, "unauthorized")
	f(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "Bearer " + tokPub + "x"}}, 401, "unauthorized")
	f(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "Bearer " + strings.Repeat("t", 600)}}, 401, "unauthorized")
	r = h.do(req{method: "GET", path: "/v1/whoami"})
	if !strings.HasPrefix(r.header["Www-Authenticate"], "Bearer") {
		t.Fatalf("401 without WWW-Authenticate: %v", r.header)
	}
	h.expect(req{method: "GET", path: "/v1/whoami", headers: []string{"Authorization", "bEaReR " + tokPub}}, 200, "")
	// 413 before 401; 401 before 404 and 405.
	before := h.store.Snapshot()
	for _, chunked := range []bool{false, true} {
		head := "POST /v1/listings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
		var msg string
		if chunked {
			msg = head + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(big)), 16) + "\r\n" + big + "\r\n0\r\n\r\n"
		} else {
			msg = head + "Content-Length: " + strconv.Itoa(len(big)) + "\r\n\r\n" + big
		}
		r = h.raw([]byte(msg))
		if r.status != 413 || r.str("code") != "payload_too_large" || r.header["Content-Type"] != "application/problem+json" {
			t.Fatalf("oversized body (chunked %v): %d %s", chunked, r.status, r.body)
		}
	}
	if h.store.Snapshot() != before {
		t.Fatal("an oversized body changed the store")
	}
	r = h.raw([]byte("GET /v1/whoami HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("h", readBufferSize) + "\r\n\r\n"))
	if r.status != 431 || r.str("code") != "headers_too_large" {
		t.Fatalf("oversized headers: %d %s", r.status, r.body)
	}
	r = h.raw([]byte("BROKEN\r\n\r\n"))
	if r.status != 400 || r.str("code") != "invalid_request" {
		t.Fatalf("malformed request: %d %s", r.status, r.body)
	}
	f(req{method: "GET", path: "/nope"}, 401, "unauthorized")
	f(req{method: "PATCH", path: "/v1/listings"}, 401, "unauthorized")
	// 404 unknown routes, 405 with Allow.
	f(req{method: "GET", path: "/nope", token: tokPub}, 404, "not_found")
	f(req{method: "GET", path: "/v1/listings/" + l.id + "/nope", token: tokPub}, 404, "not_found")
	r = h.rejected(req{method: "PATCH", path: "/v1/listings", token: tokCli}, 405, "method_not_allowed")
	if r.header["Allow"] != "GET, HEAD, POST" {
		t.Fatalf("Allow %q", r.header["Allow"])
	}
	r = h.rejected(req{method: "POST", path: "/livez"}, 405, "method_not_allowed")
	if r.header["Allow"] != "GET, HEAD" {
		t.Fatalf("Allow %q", r.header["Allow"])
	}
	// 405 before 403: a client using a wrong method on a publisher route.
	f(req{method: "GET", path: "/v1/listings/" + l.id + "/lease", token: tokCli}, 405, "method_not_allowed")
	// 403 before 415 and 400.
	f(req{method: "POST", path: "/v1/listings", token: tokCli, body: "nonsense", headers: []string{"Content-Type", "text/plain"}}, 403, "forbidden")
	f(req{method: "POST", path: "/v1/admin/revocations", token: tokPub, body: "{}"}, 403, "forbidden")
	// 415 before 400.
	f(req{method: "POST", path: "/v1/listings", token: tokPub, body: "nonsense", headers: []string{"Content-Type", "text/plain"}}, 415, "unsupported_media_type")
	f(req{method: "PUT", path: "/v1/listings/bad/lease", token: tokPub, body: "{}", headers: []string{"Content-Type", "application/xml"}}, 415, "unsupported_media_type")
	// 400 before store outcomes.
	f(req{method: "POST", path: "/v1/listings", token: tokPub, body: "nonsense", headers: []string{"Idempotency-Key", "k"}}, 400, "invalid_request")
}

func TestRevokedSubject(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	h.visible(tokPub2, listingBody("eu", 7, "public"))
	r := h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"pub-1","ttl_s":60}`}, 200, "")
	if r.num("removed") != 1 {
		t.Fatalf("revocation: %s", r.body)
	}
	h.rejected(req{method: "GET", path: "/v1/listings/" + l.id, token: tokCli}, 404, "not_found")
	// Every authenticated route answers 403 revoked to the revoked subject.
	for _, q := range []req{
		{method: "GET", path: "/v1/whoami"},
		{method: "GET", path: "/v1/listings?protocol_version=7"},
		{method: "POST", path: "/v1/listings", body: listingBody("eu", 7, "public"), headers: []string{"Idempotency-Key", "x"}},
		{method: "PUT", path: "/v1/listings/" + l.id + "/lease", body: "{}"},
		{method: "DELETE", path: "/v1/listings/" + l.id},
		{method: "POST", path: "/v1/admin/drain"},
	} {
		q.token = tokPub
		h.rejected(q, 403, "revoked")
	}
	h.expect(req{method: "GET", path: "/v1/whoami", token: tokPub2}, 200, "")
	// The revocation ends with its ttl.
	h.clock.Advance(61e9)
	h.expect(req{method: "GET", path: "/v1/whoami", token: tokPub}, 200, "")
}

func TestWhoami(t *testing.T) {
	h := newHarness(t, testLimits())
	f := func(token, want string) {
		t.Helper()
		r := h.expect(req{method: "GET", path: "/v1/whoami", token: token}, 200, "")
		if string(r.body) != want {
			t.Fatalf("whoami = %s, want %s", r.body, want)
		}
	}
	f(tokBoth, `{"subject":"both-1","game_id":"demo","environment_id":"dev","roles":["publisher","client"]}`)
	f(tokGlobalOp, `{"subject":"gop","game_id":"*","environment_id":"*","roles":["operator"]}`)
	f(tokOtherCli, `{"subject":"ocli-1","game_id":"other","environment_id":"dev","roles":["client"]}`)
}
