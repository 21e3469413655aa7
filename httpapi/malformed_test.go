package httpapi

import (
	"strings"
	"testing"
	"time"
)

// TestMalformedTokenPrecedence: a lease token that is not a well-formed
// capability is "wrong lease or token" (404), but store outcomes that come
// before NotFound in the reference order
// (docs/contracts/http.md#error-precedence: ServiceUnavailable, Draining) and
// the field validation of docs/contracts/http.md#error-precedence
// (current_players above max_players on renew) still win, exactly as for a
// well-formed wrong token.
func TestMalformedTokenPrecedence(t *testing.T) {
	f := func(t *testing.T, badTok string) {
		h := newHarness(t, testLimits())
		l := h.visible(tokPub, listingBody("eu", 7, "public"))
		renew := func(tok, extra string) req {
			return req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
				body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + tok + `","expected_version":1` + extra + `}`}
		}
		del := func(tok string) req {
			return req{method: "DELETE", path: "/v1/listings/" + l.id, token: tokPub,
				headers: []string{"Lease-Id", l.leaseID, "Lease-Token", tok}}
		}
		// docs/contracts/http.md#error-precedence: field validation before any store outcome.
		h.rejected(renew(badTok, `,"current_players":9`), 400, "invalid_request")
		h.rejected(renew(badTok, ""), 404, "not_found")
		h.rejected(del(badTok), 404, "not_found")
		// Draining comes before NotFound on renew.
		if err := h.store.BeginDrain(t.Context()); err != nil {
			t.Fatalf("BeginDrain: %v", err)
		}
		h.rejected(renew(badTok, ""), 503, "draining")
		// ServiceUnavailable comes first on renew and delete.
		h.store.MarkUnavailable()
		h.rejected(renew(badTok, ""), 503, "service_unavailable")
		h.rejected(del(badTok), 503, "service_unavailable")
	}
	t.Run("malformed", func(t *testing.T) { f(t, "not-a-token") })
	t.Run("wrong", func(t *testing.T) { f(t, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA") })
}

// TestMalformedRequestLogsNoToken: fasthttp reports a request it cannot
// parse with a snippet of the raw bytes read so far, which hold the
// Authorization header; that message must never reach the log
// (docs/contracts/http.md#conventions: logs never contain a token).
func TestMalformedRequestLogsNoToken(t *testing.T) {
	h := newHarness(t, testLimits())
	for _, raw := range []string{
		// An invalid header line after the credentials.
		"GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokPub + "\r\nBad Header\x00: v\r\n\r\n",
		// A bad Content-Length after the credentials.
		"POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokPub + "\r\nContent-Length: x\r\n\r\n",
	} {
		r := h.raw([]byte(raw))
		if r.status != 400 {
			t.Fatalf("malformed request answered %d: %s", r.status, r.body)
		}
	}
	// fasthttp's worker logs the read error after the connection is done
	// (one line a second at most): wait (bounded) until it is there.
	for i := 0; i < 500 && !strings.Contains(h.logs.String(), `"msg":"fasthttp"`); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(h.logs.String(), `"msg":"fasthttp"`) {
		t.Fatalf("no read error logged:\n%s", h.logs.String())
	}
	if logs := h.logs.String(); strings.Contains(logs, tokPub) {
		t.Fatalf("the log holds a bearer token:\n%s", logs)
	}
}
