package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// keepAlive is one client connection held open for many requests.
type keepAlive struct {
	c net.Conn
	r *bufio.Reader
	// metricsToken is the token metric reads /metrics with (a global
	// operator's: the API listener's /metrics is not public).
	metricsToken string
}

// dialKeepAlive connects to addr from the local IP from ("" for any).
func dialKeepAlive(t testing.TB, addr, from string) *keepAlive {
	t.Helper()
	d := net.Dialer{Timeout: hangGuard}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &keepAlive{c: c, r: bufio.NewReader(c)}
}

// get sends GET path with the bearer token (none if "") and reads the answer.
func (k *keepAlive) get(path, token string) (int, []byte, error) {
	if err := k.c.SetDeadline(time.Now().Add(hangGuard)); err != nil {
		return 0, nil, err
	}
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	if _, err := fmt.Fprintf(k.c, "GET %s HTTP/1.1\r\nHost: rendezvous\r\n%s\r\n", path, auth); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// mustGet fails the test unless GET path answers 200.
func (k *keepAlive) mustGet(t testing.TB, path, token string) []byte {
	t.Helper()
	status, body, err := k.get(path, token)
	if err != nil || status != 200 {
		t.Fatalf("GET %s on a kept-alive connection: status %d, err %v; body %s", path, status, err, body)
	}
	return body
}

// metric reads one series' value from /metrics; a series not yet written is 0.
func (k *keepAlive) metric(t testing.TB, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(string(k.mustGet(t, "/metrics", k.metricsToken)), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("series %s has value %q", series, v)
			}
			return f
		}
	}
	return 0
}

// waitFor polls cond (bounded by hangGuard) and fails with what otherwise.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitLogLine waits (bounded) for a log line with msg and returns it: lines
// written before the dev banner may still be in the pipe when startProc
// returns.
func (p *proc) waitLogLine(msg string) map[string]any {
	p.t.Helper()
	waitFor(p.t, "log line "+msg, func() bool { return p.logged(msg) != nil })
	return p.logged(msg)
}

// alive fails the test if the server has exited.
func (p *proc) alive() {
	p.t.Helper()
	select {
	case <-p.exited:
		p.t.Fatalf("the server exited with status %d; log:\n%s", p.srv.ExitCode(), p.stderr.String())
	default:
	}
}

// flood opens n idle connections to the server and returns a function
// that closes them. The kernel completes a connection before the server
// accepts it, so every dial succeeds while the server lives, whatever it
// does with them.
func (p *proc) flood(n int) func() {
	t := p.t
	t.Helper()
	conns := make([]net.Conn, 0, n)
	closeAll := func() {
		for _, c := range conns {
			_ = c.Close()
		}
		conns = conns[:0]
	}
	t.Cleanup(closeAll)
	for range n {
		c, err := net.DialTimeout("tcp", p.httpAddr, hangGuard)
		if err != nil {
			p.alive()
			t.Fatalf("flood dial %d: %v", len(conns), err)
		}
		conns = append(conns, c)
	}
	return closeAll
}

// fdLimitWrapper runs the binary with an open-file limit of n, soft and hard.
func fdLimitWrapper(n int) []string {
	return []string{"sh", "-c", "ulimit -n " + strconv.Itoa(n) + ` && exec "$0" "$@"`}
}

const (
	floodFDLimit = 256
	floodConns   = 300 // idle connections: more than the open-file limit
	floodLegit   = 4   // kept-alive connections of legitimate clients
	floodAfter   = 20  // fresh requests that must all be answered after the flood
)

// TestE2EConnectionFlood: more idle connections than the process has file
// descriptors never stop the server. Under the flood, legitimate clients
// on kept-alive connections are still served; once it ends, every new
// request is answered. With the default ceiling (derived from the open-file
// limit) the excess is refused on accept; with a ceiling set above the
// limit, accepts fail for want of descriptors and are retried.
func TestE2EConnectionFlood(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		t.Run("default ceiling refuses the excess", func(t *testing.T) {
			p := startProcWrapped(t, fdLimitWrapper(floodFDLimit), storeArgs...)
			if l := p.waitLogLine("open-file limit"); l["limit"] != float64(floodFDLimit) {
				t.Fatalf("open-file limit line %v, want limit %d", l, floodFDLimit)
			}
			maxConns := int(p.waitLogLine("settings")["http_max_conns"].(float64))
			if maxConns < floodLegit+1 || maxConns >= floodFDLimit {
				t.Fatalf("default http_max_conns %d at an open-file limit of %d", maxConns, floodFDLimit)
			}
			legit, endFlood := floodWithLegitClients(t, p, `rendezvous_http_connections_refused_total{reason="max_conns"}`,
				float64(floodConns-(maxConns-floodLegit)))
			// Every admitted connection is open; every other one was refused.
			if open := legit[0].metric(t, "rendezvous_http_connections_open"); open != float64(maxConns) {
				t.Fatalf("%v connections open under the flood, want the ceiling %d", open, maxConns)
			}
			p.waitLogLine("HTTP connections refused")
			endFlood()
			afterFlood(t, p, legit)
		})
		t.Run("ceiling above the fd limit retries accepts", func(t *testing.T) {
			p := startProcWrapped(t, fdLimitWrapper(floodFDLimit), append(storeArgs, "--http-max-conns", "1000")...)
			p.waitLogLine("http-max-conns is above what the open-file limit leaves for connections; accepts that find no descriptor are retried")
			legit, endFlood := floodWithLegitClients(t, p, "rendezvous_http_accept_errors_total", 1)
			p.waitLogLine("cannot accept HTTP connections; retrying")
			t.Logf("under the flood: %v connections open, %v accept errors",
				legit[0].metric(t, "rendezvous_http_connections_open"), legit[0].metric(t, "rendezvous_http_accept_errors_total"))
			endFlood()
			afterFlood(t, p, legit)
		})
	})
}

// floodWithLegitClients opens floodLegit kept-alive connections, then the
// flood; it waits until counter reaches at least want and checks that the
// server lives and serves the kept-alive connections. It returns them and
// the function that ends the flood.
func floodWithLegitClients(t *testing.T, p *proc, counter string, want float64) ([]*keepAlive, func()) {
	t.Helper()
	browse := "/v1/listings?protocol_version=1"
	legit := make([]*keepAlive, floodLegit)
	for i := range legit {
		legit[i] = dialKeepAlive(t, p.httpAddr, "")
		legit[i].metricsToken = statsToken(p.tokens)
		legit[i].mustGet(t, browse, p.tokens["client"])
	}
	endFlood := p.flood(floodConns)
	waitFor(t, counter+" to reach "+strconv.FormatFloat(want, 'f', -1, 64), func() bool {
		p.alive()
		return legit[0].metric(t, counter) >= want
	})
	p.alive()
	for range 3 {
		for _, k := range legit {
			k.mustGet(t, browse, p.tokens["client"])
		}
	}
	return legit, endFlood
}

// afterFlood waits until the server has closed the flood's connections,
// then checks every new request is answered, and that the log stayed
// short and free of secrets.
func afterFlood(t *testing.T, p *proc, legit []*keepAlive) {
	t.Helper()
	waitFor(t, "the flood's connections to close", func() bool {
		return legit[0].metric(t, "rendezvous_http_connections_open") <= float64(len(legit))
	})
	for i := range floodAfter {
		p.call("GET", "/v1/listings?protocol_version=1", p.tokens["client"], nil).expect(t, "request "+strconv.Itoa(i)+" after the flood", 200, nil)
	}
	p.alive()
	// A line a second at most per kind, not one per connection.
	if n := strings.Count(p.stderr.String(), "\n"); n > 40 {
		t.Fatalf("%d log lines for one flood:\n%s", n, p.stderr.String())
	}
	p.assertNoSecrets([]string{p.tokens["client"], p.tokens["publisher"], p.tokens["operator"]}, nil)
}

// TestE2EMaxConnsPerIP: a source at its connection bound has further
// connections closed on accept, other sources are still admitted, and a
// closed connection frees its slot.
func TestE2EMaxConnsPerIP(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		const perIP = 3
		p := startProc(t, append(storeArgs, "--http-max-conns-per-ip", strconv.Itoa(perIP))...)
		held := make([]*keepAlive, perIP)
		for i := range held {
			held[i] = dialKeepAlive(t, p.httpAddr, "127.0.0.1")
			held[i].mustGet(t, "/livez", "")
		}
		over := dialKeepAlive(t, p.httpAddr, "127.0.0.1")
		if status, _, err := over.get("/livez", ""); err == nil {
			t.Fatalf("connection %d from one address answered %d, want it closed unread", perIP+1, status)
		}
		other := dialKeepAlive(t, p.httpAddr, "127.0.0.2")
		other.metricsToken = statsToken(p.tokens)
		other.mustGet(t, "/livez", "")
		if n := other.metric(t, `rendezvous_http_connections_refused_total{reason="max_conns_per_ip"}`); n != 1 {
			t.Fatalf("%v per-address refusals counted, want 1", n)
		}
		if n := other.metric(t, `rendezvous_http_connections_refused_total{reason="max_conns"}`); n != 0 {
			t.Fatalf("%v ceiling refusals counted, want 0", n)
		}
		p.waitLogLine("HTTP connections refused")
		_ = held[0].c.Close()
		waitFor(t, "the closed connection's slot to free", func() bool {
			return other.metric(t, "rendezvous_http_connections_open") == perIP
		})
		dialKeepAlive(t, p.httpAddr, "127.0.0.1").mustGet(t, "/livez", "")
		p.alive()
	})
}
