package httpapi

import (
	"net"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Sink keeps benchmark results alive.
var Sink atomic.Int64

// bigLimits lets creation benchmarks run for any b.N without hitting a ceiling.
func bigLimits() engine.Limits {
	l := engine.DefaultLimits()
	l.MaxListings, l.MaxPresence, l.MaxAttempts, l.MaxIdempotency = 1<<24, 1<<24, 1<<24, 1<<24
	return l.WholePools()
}

// fullPoolLimits are the default ceilings with one tenant allowed the whole
// of each pool: the browse benchmarks fill the listing pool to its ceiling
// from the test tenant, which the default tenant quota (half a pool) refuses.
func fullPoolLimits() engine.Limits { return engine.DefaultLimits().WholePools() }

// serve runs handler on a fasthttp server over an in-memory listener and
// returns a client for it.
func serve(b *testing.B, handler fasthttp.RequestHandler) *fasthttp.HostClient {
	ln := fasthttputil.NewInmemoryListener()
	serveOn(b, ln, handler)
	return &fasthttp.HostClient{Addr: "bench", Dial: func(string) (net.Conn, error) { return ln.Dial() }, MaxConns: 64}
}

// serveTCP runs handler on a fasthttp server on a loopback TCP port and
// returns a keep-alive client for it: the kernel's socket costs are paid on
// both sides, as in production.
func serveTCP(b *testing.B, handler fasthttp.RequestHandler) *fasthttp.HostClient {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	serveOn(b, ln, handler)
	return &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 64}
}

func serveOn(b *testing.B, ln net.Listener, handler fasthttp.RequestHandler) {
	srv := &fasthttp.Server{Handler: handler, MaxRequestBodySize: MaxBodySize}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown below
	b.Cleanup(func() { _ = srv.Shutdown() })
}

// runHTTP sends requests made by prep in parallel and checks each status.
func runHTTP(b *testing.B, c *fasthttp.HostClient, want int, prep func(rq *fasthttp.Request, i int64)) {
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rq := fasthttp.AcquireRequest()
		rs := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(rq)
		defer fasthttp.ReleaseResponse(rs)
		var n int64
		for pb.Next() {
			prep(rq, seq.Add(1))
			if err := c.Do(rq, rs); err != nil {
				b.Fatal(err)
			}
			if rs.StatusCode() != want {
				b.Fatalf("status %d: %s", rs.StatusCode(), rs.Body())
			}
			n += int64(len(rs.Body()))
		}
		Sink.Add(n)
	})
}

var fixedBody = []byte(`{"status":"ok"}`)

// browse prepares a client's browse of a 100-item page.
func browse(rq *fasthttp.Request, _ int64) {
	rq.Header.SetMethod("GET")
	rq.SetRequestURI("http://bench/v1/listings?protocol_version=7&limit=100")
	rq.Header.Set("Authorization", "Bearer "+tokCli)
}

// createAt prepares a client's create: a POST of body to uri with tok and a
// new Idempotency-Key per request.
func createAt(uri, tok, body string) func(rq *fasthttp.Request, i int64) {
	raw := []byte(body)
	return func(rq *fasthttp.Request, i int64) {
		rq.Header.SetMethod("POST")
		rq.SetRequestURI(uri)
		rq.Header.Set("Authorization", "Bearer "+tok)
		rq.Header.SetContentType("application/json")
		rq.Header.Set("Idempotency-Key", "k"+strconv.FormatInt(i, 10))
		rq.SetBody(raw)
	}
}

// fixed is a bare handler that answers body, the ceiling a real handler
// is compared with.
func fixed(body []byte) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBody(body)
	}
}

// pageBody is a real 100-item browse answer, for a bare handler that sends
// the same bytes as browse does.
func pageBody(b *testing.B) []byte {
	d := newDirect(b, engine.DefaultLimits())
	d.fill(b, 100, 100)
	ctx := newCtx("GET", "/v1/listings?protocol_version=7&limit=100", tokCli)
	d.api.Handler(ctx)
	if ctx.Response.StatusCode() != 200 {
		b.Fatalf("status %d", ctx.Response.StatusCode())
	}
	return append([]byte(nil), ctx.Response.Body()...)
}

// BenchmarkHTTP compares, in one run and through the same client and
// in-memory transport, a bare fasthttp handler (the ceiling) with our
// browse of a 100-item page (store at its listing ceiling, 25,000), create
// listing and create join attempt.
func BenchmarkHTTP(b *testing.B) {
	benchReads(b, serve)
	b.Run("create_listing", func(b *testing.B) {
		d := newDirect(b, bigLimits())
		runHTTP(b, serve(b, d.api.Handler), 201, createAt("http://bench/v1/listings", tokPub, validCreateBody))
	})
	b.Run("create_join_attempt", func(b *testing.B) {
		d := newDirect(b, bigLimits())
		v := d.fill(b, 1, 1)[0]
		uri := "http://bench/v1/listings/" + v.ID.String() + "/join-attempts"
		runHTTP(b, serve(b, d.api.Handler), 201, createAt(uri, tokCli, `{"protocol_version":7}`))
	})
}

// BenchmarkHTTPLoopback is BenchmarkHTTP's read cases over real loopback
// TCP: bare handler, bare handler sending the same page, and browse.
func BenchmarkHTTPLoopback(b *testing.B) { benchReads(b, serveTCP) }

// benchReads runs the read cases through the client transport returns: a
// bare handler, a bare handler sending a real 100-item page, and browse.
func benchReads(b *testing.B, transport func(*testing.B, fasthttp.RequestHandler) *fasthttp.HostClient) {
	b.Run("bare", func(b *testing.B) { runHTTP(b, transport(b, fixed(fixedBody)), 200, browse) })
	b.Run("bare_page", func(b *testing.B) { runHTTP(b, transport(b, fixed(pageBody(b))), 200, browse) })
	b.Run("browse100", func(b *testing.B) {
		d := newDirect(b, fullPoolLimits())
		d.fill(b, engine.DefaultMaxListings, 100)
		runHTTP(b, transport(b, d.api.Handler), 200, browse)
	})
}

// BenchmarkHandler measures the handler path alone (no client, no
// transport): what one request costs the server beyond fasthttp's parsing.
func BenchmarkHandler(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		ctx := newCtx("GET", "/v1/listings?protocol_version=7&limit=100", tokCli)
		b.ReportAllocs()
		for b.Loop() {
			ctx.Response.Reset()
			ctx.SetContentType("application/json")
			ctx.SetBody(fixedBody)
		}
		Sink.Add(int64(len(ctx.Response.Body())))
	})
	b.Run("browse100", func(b *testing.B) {
		d := newDirect(b, fullPoolLimits())
		d.fill(b, engine.DefaultMaxListings, 100)
		ctx := newCtx("GET", "/v1/listings?protocol_version=7&limit=100", tokCli)
		b.ReportAllocs()
		for b.Loop() {
			ctx.Response.Reset()
			d.api.Handler(ctx)
		}
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d", ctx.Response.StatusCode())
		}
		Sink.Add(int64(len(ctx.Response.Body())))
	})
	b.Run("renew", func(b *testing.B) {
		d := newDirect(b, engine.DefaultLimits())
		v := d.fill(b, 1, 1)[0]
		renew := d.renewer(&v)
		var ctx *fasthttp.RequestCtx
		b.ReportAllocs()
		for b.Loop() {
			ctx = renew()
		}
		if ctx.Response.StatusCode() != 200 {
			b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
		}
	})
	b.Run("create_listing", func(b *testing.B) {
		d := newDirect(b, bigLimits())
		ctx := newCtx("POST", "/v1/listings", tokPub)
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBody([]byte(validCreateBody))
		handleCreates(b, d, ctx)
	})
	b.Run("create_join_attempt", func(b *testing.B) {
		d := newDirect(b, bigLimits())
		v := d.fill(b, 1, 1)[0]
		ctx := newCtx("POST", "/v1/listings/"+v.ID.String()+"/join-attempts", tokCli)
		ctx.Request.Header.SetContentType("application/json")
		ctx.Request.SetBody([]byte(`{"protocol_version":7}`))
		handleCreates(b, d, ctx)
	})
}

// handleCreates runs the create request ctx holds through the handler once
// per iteration, each with a new Idempotency-Key, and requires the last to
// be created.
func handleCreates(b *testing.B, d *direct, ctx *fasthttp.RequestCtx) {
	var key []byte
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		key = strconv.AppendInt(append(key[:0], 'k'), int64(i), 10)
		ctx.Request.Header.SetBytesV("Idempotency-Key", key)
		ctx.Response.Reset()
		d.api.Handler(ctx)
		i++
	}
	if ctx.Response.StatusCode() != 201 {
		b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}
