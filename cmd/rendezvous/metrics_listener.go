package main

import (
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"
)

// Timeouts of the --metrics-addr listener: a scrape is one small GET.
const (
	metricsReadTimeout  = 10 * time.Second
	metricsWriteTimeout = 10 * time.Second
	metricsIdleTimeout  = 60 * time.Second
)

// newMetricsServer serves GET /metrics and nothing else, for --metrics-addr:
// a listener scrapers reach without the API's port (and its load balancer)
// being involved. The API port keeps serving /metrics too.
func newMetricsServer(expo *exposition, log *slog.Logger) *fasthttp.Server {
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if string(ctx.Path()) != "/metrics" {
				ctx.Error("not found: this listener serves /metrics only\n", fasthttp.StatusNotFound)
				return
			}
			if !ctx.IsGet() && !ctx.IsHead() {
				ctx.Response.Header.Set("Allow", "GET, HEAD")
				ctx.Error("method not allowed\n", fasthttp.StatusMethodNotAllowed)
				return
			}
			ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
			expo.write(ctx)
		},
		Name:                         "rendezvous",
		ReadTimeout:                  metricsReadTimeout,
		WriteTimeout:                 metricsWriteTimeout,
		IdleTimeout:                  metricsIdleTimeout,
		DisablePreParseMultipartForm: true,
		SecureErrorLogMessage:        true,
		Logger:                       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
