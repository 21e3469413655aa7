package httpapi

import (
	"testing"
)

// HEAD on a GET route answers as GET would, headers only: the same status,
// Content-Type and Content-Length, no body; a route without GET answers
// 405 with an Allow header that lists HEAD wherever it lists GET.
func TestHeadAnswersAsGet(t *testing.T) {
	h := newHarness(t, testLimits())
	l := h.visible(tokPub, listingBody("eu", 7, "public"))
	for _, q := range []req{
		{path: "/livez"},
		{path: "/readyz"},
		{path: "/v1/whoami", token: tokCli},
		{path: "/v1/listings?protocol_version=7", token: tokCli},
		{path: "/v1/listings/" + l.id, token: tokCli},
		{path: "/v1/listings?protocol_version=0", token: tokCli}, // 400
		{path: "/v1/listings", token: "wrong"},                   // 401
	} {
		q.method = "GET"
		get := h.do(q)
		q.method = "HEAD"
		head := h.do(q)
		if head.status != get.status || head.header["Content-Type"] != get.header["Content-Type"] ||
			head.header["Content-Length"] != get.header["Content-Length"] || len(head.body) != 0 {
			t.Fatalf("HEAD %s: %d %v %q; GET: %d %v", q.path, head.status, head.header, head.body, get.status, get.header)
		}
	}
	r := h.rejected(req{method: "HEAD", path: "/v1/listings/" + l.id + "/lease", token: tokPub}, 405, "")
	if r.header["Allow"] != "PUT" {
		t.Fatalf("HEAD on a PUT route: Allow %q", r.header["Allow"])
	}
	r = h.rejected(req{method: "PUT", path: "/v1/listings/" + l.id, token: tokPub}, 405, "method_not_allowed")
	if r.header["Allow"] != "GET, HEAD, DELETE" {
		t.Fatalf("Allow %q", r.header["Allow"])
	}
}
