package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawHTTP writes msg on a fresh TCP connection and reads one response.
func (p *proc) rawHTTP(msg string) httpReply {
	p.t.Helper()
	c, err := net.Dial("tcp", p.httpAddr)
	if err != nil {
		p.t.Fatalf("cannot connect: %v", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(hangGuard)); err != nil {
		p.t.Fatal(err)
	}
	// The server may answer (and close) before it has read everything: a
	// write error after that is expected, the response is what counts.
	_, _ = io.WriteString(c, msg)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		p.t.Fatalf("no HTTP response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("reading the body: %v", err)
	}
	return httpReply{resp.StatusCode, resp.Header, b}
}

// pools is the stats document's pool occupancy, to compare before and after.
func (p *proc) pools() string {
	p.t.Helper()
	var st struct {
		Pools json.RawMessage `json:"pools"`
	}
	p.freshStats(p.t, statsToken(p.tokens), &st)
	return string(st.Pools)
}

// statsToken is the --dev token that may read the instance's stats: the
// global operator's where --dev makes one, else the operator's.
func statsToken(tokens map[string]string) string {
	if tok := tokens["global-operator"]; tok != "" {
		return tok
	}
	return tokens["operator"]
}

// TestE2EHeaderAndBodyAbuse: oversized headers, oversized or lying bodies
// and bad JSON each get their typed problem answer from the real binary,
// change nothing (pools and idempotency keys untouched), and the server goes
// on serving.
func TestE2EHeaderAndBodyAbuse(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		before := p.pools()
		auth := "Authorization: Bearer " + p.tokens["publisher"] + "\r\n"
		post := "POST /v1/listings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: abuse-1\r\n" + auth
		good, err := json.Marshal(listingBody("Abuse host"))
		if err != nil {
			t.Fatal(err)
		}
		big := `{"display_name":"` + strings.Repeat("a", 16<<10) + `"}`
		f := func(name, msg string, status int, code string) {
			t.Helper()
			r := p.rawHTTP(msg)
			if r.status != status || r.problemCode(t) != code {
				t.Fatalf("%s: %d %s, want %d %s", name, r.status, r.body, status, code)
			}
		}
		f("one huge header", "GET /v1/whoami HTTP/1.1\r\nHost: x\r\n"+auth+"X-Big: "+strings.Repeat("h", 16<<10)+"\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "headers_too_large")
		f("many headers", "GET /v1/whoami HTTP/1.1\r\nHost: x\r\n"+auth+strings.Repeat("X-Many: 0123456789abcdef\r\n", 1000)+"\r\n",
			http.StatusRequestHeaderFieldsTooLarge, "headers_too_large")
		f("body over 16 KiB", post+"Content-Length: "+strconv.Itoa(len(big))+"\r\n\r\n"+big,
			http.StatusRequestEntityTooLarge, "payload_too_large")
		f("chunked body over 16 KiB", post+"Transfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(int64(len(big)), 16)+"\r\n"+big+"\r\n0\r\n\r\n",
			http.StatusRequestEntityTooLarge, "payload_too_large")
		// Decided from the header alone: the gigabyte is never sent.
		f("declared gigabyte", post+"Content-Length: 1073741824\r\n\r\n{", http.StatusRequestEntityTooLarge, "payload_too_large")
		f("malformed HTTP", "BROKEN\r\n\r\n", http.StatusBadRequest, "invalid_request")
		for name, body := range map[string]string{
			"not JSON":         "{nonsense",
			"truncated JSON":   string(good[:len(good)/2]),
			"duplicate member": `{"region":"eu","region":"us"}`,
			"unknown member":   strings.Replace(string(good), "{", `{"extra":1,`, 1),
			"number as string": strings.Replace(string(good), `"max_players":8`, `"max_players":"8"`, 1),
		} {
			f(name, post+"Content-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body, http.StatusBadRequest, "invalid_request")
		}
		if after := p.pools(); after != before {
			t.Fatalf("rejected requests changed the pools: %s, before %s", after, before)
		}
		// The key of every rejected request is still unused, and the server
		// serves normally.
		p.publish("abuse-1", "Abuse host")
		p.call("GET", "/livez", "", nil).expect(t, "livez", http.StatusOK, nil)
	})
}
