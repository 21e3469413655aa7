package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// NewRequest is a request to the server's HTTP API: body (if not nil) as
// JSON, token (if not "") as the bearer token, and hdr as pairs of header
// name and value.
func NewRequest(method, url, token string, body any, hdr ...string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req, nil
}

// Exchange sends req with c and reads the whole answer. On an error resp
// is nil if nothing was answered, else the body could not be read.
func Exchange(c *http.Client, req *http.Request) (resp *http.Response, body []byte, err error) {
	resp, err = c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	return resp, body, err
}

// ProblemCode is the code of an application/problem+json answer, "" for
// any other answer (or a problem without a code).
func ProblemCode(h http.Header, body []byte) string {
	if !strings.HasPrefix(h.Get("Content-Type"), "application/problem+json") {
		return ""
	}
	var pr struct{ Code string }
	if json.Unmarshal(body, &pr) != nil {
		return ""
	}
	return pr.Code
}
