package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// A write no replica confirmed in time answers 503 service_unavailable with
// the reason not_replicated and Retry-After: 1, so the SDK retries it by
// itself.
func TestNotReplicatedNamesItsReason(t *testing.T) {
	d := newDirect(t, engine.DefaultLimits())
	var ctx fasthttp.RequestCtx
	d.api.writeOutcome(&ctx, engine.Result{Outcome: engine.ServiceUnavailable, NotReplicated: true}, nil)
	var p map[string]any
	if err := json.Unmarshal(ctx.Response.Body(), &p); err != nil {
		t.Fatal(err)
	}
	if ctx.Response.StatusCode() != 503 || p["code"] != "service_unavailable" || p["reason"] != "not_replicated" ||
		p["detail"] != notReplicatedDetail || string(ctx.Response.Header.Peek("Retry-After")) != "1" {
		t.Fatalf("-> %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
