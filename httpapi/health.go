package httpapi

import (
	"github.com/valyala/fasthttp"
)

// Unauthenticated endpoints: liveness, readiness, Prometheus metrics and
// the OpenAPI description.

func (a *API) servePublic(ctx *fasthttp.RequestCtx, o op) {
	switch o {
	case opLivez:
		writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"live"}`))
	case opReadyz:
		switch {
		case !a.store.Available():
			ctx.Response.Header.Set("Retry-After", retryAfterUnavailable)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, []byte(`{"status":"unavailable"}`))
		case a.store.Draining():
			ctx.Response.Header.Set("Retry-After", a.drainRetryAfter)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, []byte(`{"status":"draining"}`))
		default:
			writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"ready"}`))
		}
	case opMetrics:
		ctx.SetStatusCode(fasthttp.StatusOK)
		ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		a.writeProm(ctx)
	case opOpenAPI:
		serveOpenAPI(ctx)
	default:
		panic("BUG: not a public operation: " + opNames[o])
	}
}
