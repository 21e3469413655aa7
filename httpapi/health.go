package httpapi

import (
	"github.com/valyala/fasthttp"
)

// Unauthenticated endpoints: liveness, readiness and the OpenAPI
// description.

func (a *API) servePublic(ctx *fasthttp.RequestCtx, o op) {
	switch o {
	case opLivez:
		writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"live"}`))
	case opReadyz:
		st, _ := a.storeStats.Stats()
		switch {
		case !st.Available:
			ctx.Response.Header.Set("Retry-After", retryAfterUnavailable)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, []byte(`{"status":"unavailable"}`))
		case st.Draining:
			ctx.Response.Header.Set("Retry-After", a.drainRetryAfter)
			writeJSON(ctx, fasthttp.StatusServiceUnavailable, []byte(`{"status":"draining"}`))
		default:
			writeJSON(ctx, fasthttp.StatusOK, []byte(`{"status":"ready"}`))
		}
	case opOpenAPI:
		serveOpenAPI(ctx)
	default:
		panic("BUG: not a public operation: " + opNames[o])
	}
}

// serveMetrics answers GET /metrics on the API listener, for a global operator:
// the series name every tenant (router.go).
func (a *API) serveMetrics(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	a.writeProm(ctx)
}
