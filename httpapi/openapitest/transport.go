package openapitest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Reporter receives mismatches; *testing.T and *testing.B satisfy it.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Transport is an http.RoundTripper that checks every exchange against the
// repository's OpenAPI description and reports each mismatch to R. The
// answer is handed on unchanged (its body re-readable), so the test's own
// assertions still run.
type Transport struct {
	R    Reporter
	Next http.RoundTripper // nil: http.DefaultTransport
	c    *Checker
}

// Client returns a copy of hc (nil: a client with no timeout) whose
// transport is a Transport over hc's transport. It fails r at once if the
// repository's description cannot be loaded.
func Client(r Reporter, hc *http.Client) *http.Client {
	r.Helper()
	c, err := Repository()
	if err != nil {
		r.Fatalf("%v", err)
	}
	out := &http.Client{}
	if hc != nil {
		*out = *hc
	}
	out.Transport = &Transport{R: r, Next: out.Transport, c: c}
	return out
}

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if req.Method == http.MethodHead {
		respBody = nil
	}
	if bad := t.c.Check(req, reqBody, resp, respBody); len(bad) > 0 {
		t.R.Errorf("OpenAPI description mismatch: %s %s answered %d:\n\t%s",
			req.Method, req.URL.Path, resp.StatusCode, strings.Join(bad, "\n\t"))
	}
	return resp, nil
}
