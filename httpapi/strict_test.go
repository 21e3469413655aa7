package httpapi

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
)

// TestStrictHeaders: headers a proxy in front could read differently than
// the API (a name with a space, two Authorization headers) are 400, and a
// body the API would have to decompress is 415, whoever sends them.
func TestStrictHeaders(t *testing.T) {
	h := newHarness(t, testLimits())
	body := listingBody("eu", 7, "public")
	n := 0
	post := func(extra string) string {
		n++
		return "POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokPub +
			"\r\nContent-Type: application/json\r\nIdempotency-Key: strict-" + strconv.Itoa(n) + "\r\n" + extra +
			"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	for _, c := range []struct {
		name, raw string
		status    int
		code      string
	}{
		{"two Authorization headers", post("Authorization: Bearer " + tokPub2 + "\r\n"), 400, "invalid_request"},
		{"two Authorization headers, other case", post("authorization: Bearer " + tokPub + "\r\n"), 400, "invalid_request"},
		{"a header name with a space", post("X Forwarded: 1\r\n"), 400, "invalid_request"},
		{"Content-Encoding gzip", post("Content-Encoding: gzip\r\n"), 415, "unsupported_media_type"},
		{"Content-Encoding br on a GET", "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokCli +
			"\r\nContent-Encoding: br\r\n\r\n", 415, "unsupported_media_type"},
		{"two Authorization headers, no token valid", "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer x\r\nAuthorization: Bearer " +
			tokCli + "\r\n\r\n", 400, "invalid_request"},
	} {
		r := h.raw([]byte(c.raw))
		if r.status != c.status || r.str("code") != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
		}
	}
	if n := h.store.Stats().Pools[0].Used; n != 0 {
		t.Fatalf("%d listings created by refused requests", n)
	}
	// The same request, plain or with an identity encoding, is served.
	for _, extra := range []string{"", "Content-Encoding: identity\r\n"} {
		if r := h.raw([]byte(post(extra))); r.status != 201 {
			t.Fatalf("plain create with %q: %d %s", extra, r.status, r.body)
		}
	}
}

// TestExpectContinueOverLimit: a client announcing a body above the limit
// with "Expect: 100-continue" gets 413 at once, never "100 Continue", so it
// never sends the body; a body within the limit is let in as before.
func TestExpectContinueOverLimit(t *testing.T) {
	h := newHarness(t, testLimits())
	head := func(n int) string {
		return "POST /v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokPub +
			"\r\nContent-Type: application/json\r\nIdempotency-Key: expect-" + strconv.Itoa(n) + "\r\nExpect: 100-continue\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n"
	}
	c, err := h.ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(head(MaxBodySize + 1))); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 413 ") {
		t.Fatalf("first answer line %q, want 413 (and no 100 Continue)", line)
	}
	rest, _ := br.ReadString(0)
	if !strings.Contains(rest, "payload_too_large") {
		t.Fatalf("413 body is not the problem document:\n%s", rest)
	}

	// Within the limit: 100 Continue, then the answer.
	body := listingBody("eu", 7, "public")
	c2, err := h.ln.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Write([]byte(head(len(body)))); err != nil {
		t.Fatal(err)
	}
	br2 := bufio.NewReader(c2)
	line, err = br2.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("within the limit: first line %q, %v; want 100 Continue", line, err)
	}
	if _, err := c2.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	for line != "\r\n" { // the end of the 100 answer
		if line, err = br2.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if line, err = br2.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 201 ") {
		t.Fatalf("within the limit: answer %q, %v; want 201", line, err)
	}
}
