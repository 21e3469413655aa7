package httpapi

import (
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// Server limits and timeouts.
const (
	readTimeout     = 10 * time.Second
	writeTimeout    = 10 * time.Second
	idleTimeout     = 60 * time.Second
	readBufferSize  = 8 << 10 // bounds the request line and headers
	writeBufferSize = 8 << 10
)

// NewServer returns a fasthttp server running Handler with the body limit
// (413 as problem+json), header size limit, timeouts, the name "rendezvous"
// and fasthttp's own messages (never quoting the request) sent to the API's
// logger. The caller serves and shuts it down.
func (a *API) NewServer() *fasthttp.Server {
	return &fasthttp.Server{
		Handler:                      a.Handler,
		ErrorHandler:                 a.serverError,
		ExpectHandler:                a.expectContinue,
		Name:                         "rendezvous",
		MaxRequestBodySize:           MaxBodySize,
		ReadBufferSize:               readBufferSize,
		WriteBufferSize:              writeBufferSize,
		ReadTimeout:                  readTimeout,
		WriteTimeout:                 writeTimeout,
		IdleTimeout:                  idleTimeout,
		DisablePreParseMultipartForm: true,
		// fasthttp's read errors otherwise quote the raw request, whose
		// Authorization header is a bearer token; logs never hold one.
		// Other errors still quote values, so the logger drops them too.
		SecureErrorLogMessage: true,
		Logger:                &fasthttpLogger{l: a.log},
	}
}

// serverError answers a request fasthttp could not read: too large a body
// (413), too large headers (431), a timeout (408) or malformed HTTP (400).
func (a *API) serverError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		a.writeProblem(ctx, probPayloadTooLarge, "", nil)
		a.metrics.request(opUnknown, fasthttp.StatusRequestEntityTooLarge, 0)
	case errors.As(err, &small):
		a.writeProblem(ctx, probHeadersTooLarge, "", nil)
		a.metrics.request(opUnknown, fasthttp.StatusRequestHeaderFieldsTooLarge, 0)
	case errors.As(err, &ne) && ne.Timeout():
		a.writeProblem(ctx, probRequestTimeout, "", nil)
		a.metrics.request(opUnknown, fasthttp.StatusRequestTimeout, 0)
	default:
		a.writeProblem(ctx, probInvalidRequest, "malformed HTTP request", nil)
		a.metrics.request(opUnknown, fasthttp.StatusBadRequest, 0)
	}
}
