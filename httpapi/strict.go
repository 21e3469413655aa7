package httpapi

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// strictHeaders answers a request whose headers the API refuses to guess
// about, and reports whether it answered. It runs before authentication,
// like fasthttp's own checks of malformed HTTP:
//
//   - a header name that is not an RFC 9110 token (a space, a control
//     byte...) is 400: fasthttp tolerates a name with a space, and a proxy
//     in front may read such a header differently than we do;
//   - more than one Authorization header is 400: which one a proxy checked
//     and which one we read could differ;
//   - a Content-Encoding other than identity is 415: the API never
//     decompresses, and reading a compressed body as JSON would be a guess.
func (a *API) strictHeaders(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	auth := 0
	for k, v := range h.All() {
		if !isToken(k) {
			a.writeProblem(ctx, probInvalidRequest, "invalid header name", nil)
			return true
		}
		switch {
		case bytes.EqualFold(k, hdrAuthorization):
			auth++
			if auth > 1 {
				a.writeProblem(ctx, probInvalidRequest, "more than one Authorization header", nil)
				return true
			}
		case bytes.EqualFold(k, hdrContentEncoding):
			if !bytes.EqualFold(bytes.TrimSpace(v), encIdentity) {
				a.writeProblem(ctx, probUnsupportedMediaType, "Content-Encoding must be absent or identity", nil)
				return true
			}
		}
	}
	return false
}

var (
	hdrAuthorization   = []byte("Authorization")
	hdrContentEncoding = []byte("Content-Encoding")
	encIdentity        = []byte("identity")
)

// isToken reports whether b is a non-empty RFC 9110 token (tchar*).
func isToken(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c >= 0x80 || !tchar[c] {
			return false
		}
	}
	return true
}

// tchar marks the bytes RFC 9110 section 5.6.2 allows in a token.
var tchar = func() (t [128]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// expectContinue decides an "Expect: 100-continue" request before its body
// is read: one whose declared length is above MaxBodySize gets 413 and no
// "100 Continue", so the client never sends a body we would only discard.
// fasthttp closes the connection after such an answer.
func (a *API) expectContinue(ctx *fasthttp.RequestCtx) int {
	if ctx.Request.Header.ContentLength() > MaxBodySize {
		a.writeProblem(ctx, probPayloadTooLarge, "", nil)
		a.metrics.request(opUnknown, fasthttp.StatusRequestEntityTooLarge, 0)
		return fasthttp.StatusRequestEntityTooLarge
	}
	return fasthttp.StatusContinue
}
