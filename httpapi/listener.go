package httpapi

import (
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Connection metric names, in the style of docs/contracts/http.md#health-and-metrics.
const (
	metricConnsOpen    = "rendezvous_http_connections_open"
	metricConnsRefused = "rendezvous_http_connections_refused_total"
	metricAcceptErrors = "rendezvous_http_accept_errors_total"
)

// refusal is why a connection was refused; admitted is none.
type refusal int

const (
	admitted refusal = iota - 1
	refusedMaxConns
	refusedMaxConnsPerIP
)

// refusalNames are the reason labels of metricConnsRefused.
var refusalNames = [...]string{refusedMaxConns: "max_conns", refusedMaxConnsPerIP: "max_conns_per_ip"}

// Accept retry delays: as net/http, 5ms doubling up to 1s.
const (
	acceptRetryMin = 5 * time.Millisecond
	acceptRetryMax = time.Second
)

// ConnLimits bound the HTTP connections a Listener admits.
type ConnLimits struct {
	MaxConns      int // open connections at once; at least 1
	MaxConnsPerIP int // open connections per client IPv4 address or IPv6 /64; 0: no bound
}

// Listener wraps the HTTP listener so that what clients do can never stop
// the server: an accept error (no file descriptor left, and any other) is
// retried after a back-off instead of ending fasthttp's Serve, and a
// connection over MaxConns or MaxConnsPerIP is closed at once, before any
// byte is read. Refusals and accept errors are counted and logged at most
// once per logInterval each, never with client data. Accept is meant
// for one goroutine (fasthttp's Serve); Close and the connections' Close
// are safe from any.
type Listener struct {
	net.Listener
	limits ConnLimits
	log    *slog.Logger

	done      chan struct{} // closed by Close: ends a back-off wait
	closeOnce sync.Once

	open  atomic.Int64
	mu    sync.Mutex
	perIP map[netip.Prefix]int // open connections per source, with MaxConnsPerIP

	refused      [len(refusalNames)]*metrics.Counter
	acceptErrors *metrics.Counter
	refusedLog   logLimiter
	errorLog     logLimiter
}

// NewListener wraps ln with limits, counting into the API's metrics and
// logging to its logger.
func (a *API) NewListener(ln net.Listener, limits ConnLimits) (*Listener, error) {
	if limits.MaxConns < 1 || limits.MaxConnsPerIP < 0 {
		return nil, errors.New("httpapi: ConnLimits needs MaxConns >= 1 and MaxConnsPerIP >= 0")
	}
	set := a.metrics.set
	l := &Listener{
		Listener: ln, limits: limits, log: a.log, done: make(chan struct{}),
		perIP:        map[netip.Prefix]int{},
		acceptErrors: set.GetOrCreateCounter(metricAcceptErrors),
	}
	for r, name := range refusalNames {
		l.refused[r] = set.GetOrCreateCounter(metricConnsRefused + `{reason="` + name + `"}`)
	}
	set.GetOrCreateGauge(metricConnsOpen, func() float64 { return float64(l.open.Load()) })
	return l, nil
}

// Accept returns the next admitted connection. It returns an error only
// once the listener is closed.
func (l *Listener) Accept() (net.Conn, error) {
	var delay time.Duration
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil, err
			}
			delay = min(max(2*delay, acceptRetryMin), acceptRetryMax)
			l.acceptErrors.Inc()
			if n, ok := l.errorLog.allow(); ok {
				// The error names the listen address and the system
				// error (e.g. too many open files), never a client.
				l.log.Warn("cannot accept HTTP connections; retrying", "err", err.Error(),
					"retry_in", delay.String(), "errors", n)
			}
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return nil, net.ErrClosed
			}
			continue
		}
		delay = 0
		src, reason := l.admit(c)
		if reason != admitted {
			l.refused[reason].Inc()
			_ = c.Close() // nothing was read: closing is all a refusal costs
			if n, ok := l.refusedLog.allow(); ok {
				l.log.Warn("HTTP connections refused", "reason", refusalNames[reason],
					"max_conns", l.limits.MaxConns, "max_conns_per_ip", l.limits.MaxConnsPerIP, "refused", n)
			}
			continue
		}
		return &limitedConn{Conn: c, l: l, src: src}, nil
	}
}

// admit counts c in, or tells which limit it exceeds.
func (l *Listener) admit(c net.Conn) (src netip.Prefix, r refusal) {
	if l.open.Add(1) > int64(l.limits.MaxConns) {
		l.open.Add(-1)
		return src, refusedMaxConns
	}
	if l.limits.MaxConnsPerIP == 0 {
		return src, admitted
	}
	src = sourceOf(c.RemoteAddr())
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[src] >= l.limits.MaxConnsPerIP {
		l.open.Add(-1)
		return src, refusedMaxConnsPerIP
	}
	l.perIP[src]++
	return src, admitted
}

// release counts out a connection admitted from src.
func (l *Listener) release(src netip.Prefix) {
	l.open.Add(-1)
	if l.limits.MaxConnsPerIP == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perIP[src] <= 1 {
		delete(l.perIP, src)
	} else {
		l.perIP[src]--
	}
}

// Open is the number of admitted connections not yet closed.
func (l *Listener) Open() int { return int(l.open.Load()) }

// Close closes the listener and ends a back-off wait in Accept.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// sourceOf is what MaxConnsPerIP counts by: the IPv4 address or the IPv6
// /64 (one subscriber's allocation, as the UDP error limiter keys it).
func sourceOf(a net.Addr) netip.Prefix {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{} // not TCP (tests' in-memory pipes): one shared source
	}
	ip := ta.AddrPort().Addr().Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// limitedConn gives its slot back once, on the first Close.
type limitedConn struct {
	net.Conn
	l      *Listener
	src    netip.Prefix
	closed atomic.Bool
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.l.release(c.src)
	}
	return err
}
