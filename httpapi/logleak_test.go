package httpapi

import (
	"bufio"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// A secret in a request fasthttp cannot parse (a control byte in a header
// value or the query) must reach neither the log nor the answer: fasthttp
// quotes the offending value in its errors, so the logger it is given
// writes fixed messages only.

// leakSecret stands for a bearer token, lease token or capability.
const leakSecret = "SeCrEt-7Qm2xZr9Lk4Wp0Vb8Nc3Hd6Jf1Gs5"

// leakForms are requests carrying leakSecret next to a byte HTTP forbids.
func leakForms(secret string) []string {
	auth := func(tail string) string {
		return "GET /v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + tail + "\r\n\r\n"
	}
	return []string{
		auth("\x00"), auth("\x7f"), auth("\x01"), auth("\rX-Next: 1"),
		"DELETE /v1/listings/00000000-0000-4000-8000-000000000001 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokPub +
			"\r\nLease-Id: 00000000-0000-4000-8000-000000000002\r\nLease-Token: " + secret + "\x00\r\n\r\n",
		"GET /v1/listings?protocol_version=1&after=" + secret + "\x00 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + tokCli + "\r\n\r\n",
	}
}

// exchange writes one raw request on its own connection and returns what
// came back (possibly nothing: the server may just close).
func (h *harness) exchange(request string) []byte {
	h.t.Helper()
	c, err := h.ln.Dial()
	if err != nil {
		h.t.Fatal(err)
	}
	defer c.Close()
	go func() { _, _ = c.Write([]byte(request)) }() // the server may close early
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var rs fasthttp.Response
	if err := rs.Read(bufio.NewReader(c)); err != nil {
		return nil
	}
	return append(rs.Header.Header(), rs.Body()...)
}

// settledLogs waits (bounded) until fasthttp's worker has logged what it
// will about connections already closed: the log stops growing.
func (h *harness) settledLogs() string {
	prev := ""
	for range 50 {
		time.Sleep(20 * time.Millisecond)
		cur := h.logs.String()
		if cur == prev {
			return cur
		}
		prev = cur
	}
	return prev
}

// assertNoLeak fails if text shows the secret or a piece of it long enough
// to matter (fasthttp may quote or cut a value).
func assertNoLeak(t testing.TB, where, text, secret string) {
	t.Helper()
	const piece = 12
	for i := 0; i+piece <= len(secret); i++ {
		if strings.Contains(text, secret[i:i+piece]) {
			t.Fatalf("%s shows part of a secret:\n%s", where, text)
		}
	}
}

func TestMalformedSecretsNeverLogged(t *testing.T) {
	h := newHarness(t, testLimits())
	for _, form := range leakForms(leakSecret) {
		assertNoLeak(t, "an answer", string(h.exchange(form)), leakSecret)
	}
	logs := h.settledLogs()
	assertNoLeak(t, "the log", logs, leakSecret)
	if !strings.Contains(logs, `"msg":"fasthttp`) {
		t.Fatalf("fasthttp's errors were not logged at all:\n%s", logs)
	}
}

// A bounded loop of random control bytes at random places of a request
// holding secrets in its headers and query.
func TestRandomControlBytesNeverLogSecrets(t *testing.T) {
	h := newHarness(t, testLimits())
	rng := rand.New(rand.NewPCG(1, 2))
	base := "GET /v1/listings?protocol_version=1&after=" + leakSecret + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
		leakSecret + "\r\nLease-Token: " + leakSecret + "\r\n\r\n"
	for range 200 {
		b := []byte(base)
		for range 1 + rng.IntN(3) {
			c := byte(rng.IntN(0x21))
			if c == 0x20 {
				c = 0x7f
			}
			b[rng.IntN(len(b)-4)] = c
		}
		assertNoLeak(t, "an answer", string(h.exchange(string(b))), leakSecret)
	}
	assertNoLeak(t, "the log", h.settledLogs(), leakSecret)
}

// FuzzHeaderBytes puts arbitrary bytes after a secret in a header value;
// its seed corpus (the forms above) runs with go test.
func FuzzHeaderBytes(f *testing.F) {
	for _, tail := range []string{"\x00", "\x7f", "\x01", "\r", "\rX: y", "\n\x00", "\xff"} {
		f.Add("Authorization", tail)
		f.Add("Lease-Token", tail)
	}
	f.Fuzz(func(t *testing.T, header, tail string) {
		if header == "" || strings.ContainsAny(header, ":\r\n") {
			return
		}
		h := newHarness(t, testLimits())
		value := leakSecret + tail
		if header == "Authorization" {
			value = "Bearer " + value
		}
		req := "GET /v1/whoami HTTP/1.1\r\nHost: x\r\n" + header + ": " + value + "\r\n\r\n"
		assertNoLeak(t, "an answer", string(h.exchange(req)), leakSecret)
		assertNoLeak(t, "the log", h.settledLogs(), leakSecret)
	})
}
