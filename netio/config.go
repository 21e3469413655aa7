package netio

import (
	"fmt"
	"log/slog"
	"net/netip"
	"runtime"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/rendezvous/rendezvous/engine"
)

// Defaults of Config's zero fields.
const (
	DefaultBuffer = 4 << 20
	// MaxSockets bounds Config.Sockets.
	MaxSockets = 256
	// MaxCommitLinger bounds Config.CommitLinger, well under a client's
	// first retransmission (250 ms in package client).
	MaxCommitLinger = 10 * time.Millisecond
	// offerQueue bounds Offer's queue; beyond it offers are dropped and
	// counted (presence refreshes recover them, docs/contracts/udp.md#offer).
	offerQueue = 1024
)

// Config configures a Mediator. Zero fields take the documented defaults.
type Config struct {
	Addrs      []string     // listen addresses "ip:port" (IPv4 and/or IPv6; port 0 allowed); one socket set per address
	Sockets    int          // SO_REUSEPORT sockets per address; 0 = GOMAXPROCS
	RecvBuffer int          // requested SO_RCVBUF bytes; 0 = 4 MiB
	SendBuffer int          // requested SO_SNDBUF bytes; 0 = 4 MiB
	ErrorRate  float64      // unsigned error answers per second per source; 0 = 10
	ErrorBurst int          // 0 = 20
	Portable   bool         // use the portable batch path even on Linux
	Metrics    *metrics.Set // where to register metrics (github.com/VictoriaMetrics/metrics); nil = a private set
	Logger     *slog.Logger // nil = slog.Default()
	// Tenants get their punch outcome series registered at start (at 0); a
	// tenant first seen in a report gets them then.
	Tenants []engine.Tenant

	// Forwarder, when set, carries pushed datagrams to and from the other
	// instances of a deployment sharing one store (the Redis store); nil:
	// every push leaves from this instance.
	Forwarder Forwarder

	// Overlap reads and authenticates a socket's next batch while the store
	// commits this one (worth it when a commit is a round trip: the Redis
	// store); batches are still committed and answered in the order read.
	Overlap bool
	// CommitLinger, with Overlap, holds a small batch (fewer than
	// lingerBelow datagrams) until CommitLinger after the socket's previous
	// hand-over before it is committed, gathering what arrives meanwhile:
	// at moderate rates, datagrams that each went in a commit of their own
	// (one FCALL, one answer write each on the Redis store) share commits,
	// at the cost of at most CommitLinger of answer latency. A datagram
	// after a quiet spell of CommitLinger or longer, or one of a batch
	// that is not small, is committed at once; 0 never waits. At most
	// MaxCommitLinger.
	CommitLinger time.Duration

	// RelayAllowPeers names the ranges an RDV-RELAYED-ADDRESS may be in even
	// though it is not a public unicast address (loopback, private,
	// link-local, CGNAT, multicast...) or is one of the mediator's own:
	// for labs and tests whose relays sit on such addresses. Empty: only
	// public addresses other than the mediator's are introduced.
	RelayAllowPeers []netip.Prefix
}

// normalize validates c and fills defaults. Errors are *engine.ConfigError
// naming the server flag.
func (c Config) normalize() (Config, []netip.AddrPort, error) {
	if len(c.Addrs) == 0 {
		return c, nil, &engine.ConfigError{Setting: "udp-addr", Reason: "no listen address"}
	}
	addrs := make([]netip.AddrPort, 0, len(c.Addrs))
	for _, s := range c.Addrs {
		ap, err := netip.ParseAddrPort(s)
		if err != nil || ap.Addr().Zone() != "" {
			return c, nil, &engine.ConfigError{Setting: "udp-addr", Reason: fmt.Sprintf("%q is not ip:port", s)}
		}
		addrs = append(addrs, ap)
	}
	switch {
	case c.Sockets < 0 || c.Sockets > MaxSockets:
		return c, nil, &engine.ConfigError{Setting: "udp-sockets", Reason: fmt.Sprintf("%d is not in 0..%d", c.Sockets, MaxSockets)}
	case c.RecvBuffer < 0 || c.SendBuffer < 0:
		return c, nil, &engine.ConfigError{Setting: "udp-buffer", Reason: "must not be negative"}
	case c.ErrorRate < 0 || c.ErrorRate != c.ErrorRate:
		return c, nil, &engine.ConfigError{Setting: "udp-error-rate", Reason: "must be a positive number"}
	case c.ErrorBurst < 0:
		return c, nil, &engine.ConfigError{Setting: "udp-error-burst", Reason: "must not be negative"}
	case c.CommitLinger < 0 || c.CommitLinger > MaxCommitLinger:
		return c, nil, &engine.ConfigError{Setting: "udp-commit-linger", Reason: fmt.Sprintf("%v is not in 0..%v", c.CommitLinger, MaxCommitLinger)}
	}
	if c.Sockets == 0 {
		c.Sockets = runtime.GOMAXPROCS(0)
	}
	if !rawAvailable {
		c.Sockets = 1 // no SO_REUSEPORT fan-out off Linux
	}
	if c.RecvBuffer == 0 {
		c.RecvBuffer = DefaultBuffer
	}
	if c.SendBuffer == 0 {
		c.SendBuffer = DefaultBuffer
	}
	if c.ErrorRate == 0 {
		c.ErrorRate = DefaultErrorRate
	}
	if c.ErrorBurst == 0 {
		c.ErrorBurst = DefaultErrorBurst
	}
	if c.Metrics == nil {
		c.Metrics = metrics.NewSet()
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, addrs, nil
}
