package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// Every store outcome maps to its row of docs/contracts/semantics.md#outcomes, including those no
// HTTP route can provoke today (ReplayRejected).
func TestOutcomeMapping(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	f := func(r engine.Result, status int, code string, retryAfter bool) {
		t.Helper()
		var ctx fasthttp.RequestCtx
		d.api.writeOutcome(&ctx, r, nil)
		var p map[string]any
		if err := json.Unmarshal(ctx.Response.Body(), &p); err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if ctx.Response.StatusCode() != status || p["code"] != code || p["status"] != float64(status) ||
			!strings.HasPrefix(p["type"].(string), problemType) {
			t.Fatalf("%+v -> %d %s", r, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		if got := ctx.Response.Header.Peek("Retry-After") != nil; got != retryAfter {
			t.Fatalf("%+v: Retry-After present = %v", r, got)
		}
	}
	f(engine.Result{Outcome: engine.NotFound}, 404, "not_found", false)
	f(engine.Result{Outcome: engine.Expired}, 410, "expired", false)
	f(engine.Result{Outcome: engine.Revoked}, 403, "revoked", false)
	f(engine.Result{Outcome: engine.Conflict}, 409, "conflict", false)
	f(engine.Result{Outcome: engine.ReplayRejected}, 409, "replay_rejected", false)
	for p := engine.PoolListings; p <= engine.PoolIdempotency; p++ {
		f(engine.Result{Outcome: engine.CapacityExceeded, Pool: p}, 503, "capacity_exceeded", true)
	}
	for _, q := range []engine.Pool{engine.QuotaOwnerListings, engine.QuotaTenantListings, engine.QuotaTenantAttempts,
		engine.QuotaSubjectAttempts, engine.QuotaTenantIdempotency} {
		f(engine.Result{Outcome: engine.CapacityExceeded, Pool: q}, 429, "quota_exceeded", true)
	}
	f(engine.Result{Outcome: engine.Draining}, 503, "draining", true)
	f(engine.Result{Outcome: engine.ServiceUnavailable}, 503, "service_unavailable", true)
	f(engine.Result{Outcome: engine.Outcome(200)}, 500, "internal_error", false)
}

func TestAttemptCapacity(t *testing.T) {
	l := testLimits()
	l.TenantAttemptQuota, l.SubjectAttemptQuota, l.MaxAttempts = 2, 3, 3
	h := newHarness(t, l)
	ls := h.visible(tokPub, listingBody("eu", 7, "public"))
	o := h.visible(tokOtherPub, listingBody("eu", 7, "public"))
	join := func(token, id, key string) req {
		return req{method: "POST", path: "/v1/listings/" + id + "/join-attempts", token: token,
			body: `{"protocol_version":7}`, headers: []string{"Idempotency-Key", key}}
	}
	h.expect(join(tokCli, ls.id, "a1"), 201, "")
	h.expect(join(tokCli, ls.id, "a2"), 201, "")
	h.rejected(join(tokCli, ls.id, "a3"), 429, "quota_exceeded")
	h.expect(join(tokOtherCli, o.id, "b1"), 201, "")
	h.rejected(join(tokOtherCli, o.id, "b2"), 503, "capacity_exceeded")
}
