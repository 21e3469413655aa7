package httpapi

import (
	"github.com/rendezvous/rendezvous/docs/contracts"
	"github.com/valyala/fasthttp"
)

// serveOpenAPI answers GET /v1/openapi.json with the repository's OpenAPI
// document, byte for byte (it is embedded at build time, so the served
// description is always the one the binary was built and tested against).
func serveOpenAPI(ctx *fasthttp.RequestCtx) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	// The document is immutable: no copy is needed.
	ctx.Response.SetBodyRaw(contracts.OpenAPI)
}
