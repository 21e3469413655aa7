package httpapi

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// Create listing, renew and join decide revocation in their store
// transition (one call each when the request is valid); every other answer
// they give must still lose to 403 revoked (docs/contracts/http.md#error-precedence).

// redisHarness runs the API on a Redis store of its own and returns the
// client connected to it.
func redisHarness(t *testing.T) (*harness, rueidis.Client) {
	t.Helper()
	b := newRedisBacking(t)
	return b.harness(t, b.store), b.client
}

// functionCalls counts the Redis function calls served so far: every call
// of the Redis store is one FCALL (redisstore's call.go).
func functionCalls(t *testing.T, c rueidis.Client) float64 {
	t.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	rw, _ := redistest.CommandStat(info, "fcall")
	ro, _ := redistest.CommandStat(info, "fcall_ro")
	return rw + ro
}

// TestRedisCreateRenewJoinAreOneCallEach: on the Redis store a valid
// listing creation, lease renewal and join attempt each cost one Redis
// function call, the transition's, which also decides revocation.
func TestRedisCreateRenewJoinAreOneCallEach(t *testing.T) {
	h, c := redisHarness(t)
	counted := func(name string, q req, status int) *response {
		t.Helper()
		before := functionCalls(t, c)
		r := h.expect(q, status, "")
		if n := functionCalls(t, c) - before; n != 1 {
			t.Errorf("%s: %v Redis function calls, want 1 (its transition)", name, n)
		}
		return r
	}
	l := h.created(counted("create", req{method: "POST", path: "/v1/listings", token: tokPub,
		body: listingBody("eu", 7, "public"), headers: []string{"Idempotency-Key", "one-call"}}, 201))
	h.bindPresence(l, 1)
	counted("renewal", req{method: "PUT", path: "/v1/listings/" + l.id + "/lease", token: tokPub,
		body: `{"lease_id":"` + l.leaseID + `","lease_token":"` + l.leaseToken + `","expected_version":1}`}, 200)
	j := counted("join", req{method: "POST", path: "/v1/listings/" + l.id + "/join-attempts", token: tokCli,
		body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", "one-call"}}, 201)
	h.secrets = append(h.secrets, j.str("token"))
}

// TestRevokedBeforeEveryOtherAnswerOfTheTransitionRoutes: on both stores,
// the routes that leave revocation to their transition still answer a
// revoked principal 403 revoked before anything else.
func TestRevokedBeforeEveryOtherAnswerOfTheTransitionRoutes(t *testing.T) {
	onBothStores(t, revokedFirst)
}

// revokedFirst revokes pub-1 in its tenant and cli-1 everywhere, then
// checks that each of their create, renew and join requests, valid or
// refused for any later reason (role, 415, 400, draining), answers the
// same 403 revoked as a route checked before its operation, and changes
// nothing.
func revokedFirst(t *testing.T, h *harness) {
	insp := h.served.(engine.Inspector)
	own := h.create(tokPub, listingBody("eu", 7, "public"))
	host := h.create(tokPub2, listingBody("eu", 7, "public"))
	h.bindPresence(host, 1)
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokOp, body: `{"subject":"pub-1","ttl_s":60}`}, 200, "")
	h.expect(req{method: "POST", path: "/v1/admin/revocations", token: tokGlobalOp, body: `{"subject":"cli-1","ttl_s":60}`}, 200, "")
	want := h.expect(req{method: "GET", path: "/v1/whoami", token: tokPub}, 403, "revoked").body

	create := req{method: "POST", path: "/v1/listings", body: listingBody("eu", 7, "public"), headers: []string{"Idempotency-Key", "revoked"}}
	renew := req{method: "PUT", path: "/v1/listings/" + own.id + "/lease",
		body: `{"lease_id":"` + own.leaseID + `","lease_token":"` + own.leaseToken + `","expected_version":1}`}
	join := req{method: "POST", path: "/v1/listings/" + host.id + "/join-attempts", body: `{"protocol_version":7}`,
		headers: []string{"Idempotency-Key", "revoked"}}
	type variant struct {
		name string
		mod  func(q req) req
	}
	variants := []variant{
		{"valid", func(q req) req { return q }},
		{"malformed body", func(q req) req { q.body = "{"; return q }},
		{"text/plain", func(q req) req { q.headers = append(q.headers, "Content-Type", "text/plain"); return q }},
		{"malformed listing ID", func(q req) req { q.path = strings.Replace(q.path, "/v1/listings/", "/v1/listings/x", 1); return q }},
		{"no Idempotency-Key", func(q req) req { q.headers = nil; return q }},
		{"relay-only without relay", func(q req) req {
			member := `{"relay_only_joins":true,`
			if strings.HasSuffix(q.path, "/join-attempts") {
				member = `{"relay_only":true,`
			}
			q.body = strings.Replace(q.body, "{", member, 1)
			return q
		}},
	}
	check := func(stage string) {
		for _, c := range []struct {
			name  string
			q     req
			token string
		}{
			{"create", create, tokPub}, {"renew", renew, tokPub}, {"join", join, tokCli},
			{"create without the role", create, tokCli}, {"join without the role", join, tokPub},
		} {
			for _, v := range variants {
				q := v.mod(c.q)
				q.token = c.token
				before := insp.Snapshot()
				r := h.do(q)
				if r.status != 403 || string(r.body) != string(want) || r.header["Retry-After"] != "" {
					t.Errorf("%s: %s (%s): %d %s (Retry-After %q), want the 403 revoked of a route checked first: %s",
						stage, c.name, v.name, r.status, r.body, r.header["Retry-After"], want)
				}
				if after := insp.Snapshot(); after != before {
					t.Fatalf("%s: %s (%s) changed the store:\nbefore:\n%s\nafter:\n%s", stage, c.name, v.name, before, after)
				}
			}
		}
	}
	check("serving")
	h.expect(req{method: "POST", path: "/v1/admin/drain", token: tokGlobalOp}, 202, "")
	h.expect(req{method: "POST", path: "/v1/listings", token: tokPub2, body: listingBody("eu", 7, "public"),
		headers: []string{"Idempotency-Key", "drained"}}, 503, "draining")
	check("draining")
}
