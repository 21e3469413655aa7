package httpapi

import (
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// A request that does not arrive within the read timeout is answered 408
// as a problem like every other error, and counted.
func TestReadTimeoutIsProblem(t *testing.T) {
	h := newHarness(t, testLimits())
	var ctx fasthttp.RequestCtx
	h.api.serverError(&ctx, &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded})
	if s := ctx.Response.StatusCode(); s != 408 {
		t.Fatalf("status %d, want 408", s)
	}
	if ct := string(ctx.Response.Header.ContentType()); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var p struct {
		Code   string
		Status int
	}
	if err := json.Unmarshal(ctx.Response.Body(), &p); err != nil || p.Code != "request_timeout" || p.Status != 408 {
		t.Fatalf("body %s: %v", ctx.Response.Body(), err)
	}
	m := h.do(req{method: "GET", path: "/metrics", token: tokGlobalOp})
	if !strings.Contains(string(m.body), `rendezvous_http_requests_total{route="unknown",status="408"} 1`) {
		t.Fatalf("the 408 is not counted:\n%s", m.body)
	}
}
