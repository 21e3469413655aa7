package main

import (
	"context"
	"mime"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// newHTTPClient returns the pooled client: conns keep-alive connections at
// most, each request bounded by timeout (waiting for a free connection
// included, so a saturated pool shows up as timeouts).
func newHTTPClient(conns int, timeout time.Duration) *http.Client {
	p := &poolTransport{}
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	p.next = &http.Transport{
		Proxy: nil, // the server is addressed directly
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			p.open.Add(1)
			return &countedConn{Conn: c, open: &p.open}, nil
		},
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &http.Client{Transport: p, Timeout: timeout}
}

// poolTransport is the pool's http.Transport with two counts the soak
// reads: error answers (status 400 and above) that are not
// application/problem+json (docs/contracts/http.md#errors), and the connections open to
// the server (the server's fds include one for each).
type poolTransport struct {
	next    *http.Transport
	untyped atomic.Uint64
	open    atomic.Int64
}

func (p *poolTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err == nil && resp.StatusCode >= 400 {
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/problem+json" {
			p.untyped.Add(1)
		}
	}
	return resp, err
}

// CloseIdleConnections closes the pool's idle connections (what
// http.Client.CloseIdleConnections asks of its transport).
func (p *poolTransport) CloseIdleConnections() { p.next.CloseIdleConnections() }

// countedConn takes itself off the open count when it is closed.
type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// untypedAnswers counts the error answers that were not problem+json.
func (s *apiSet) untypedAnswers() uint64 { return s.hc.Transport.(*poolTransport).untyped.Load() }

// openConns counts the pool's connections to the server now.
func (s *apiSet) openConns() int { return int(s.hc.Transport.(*poolTransport).open.Load()) }
