package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/httpapi"
	"github.com/rendezvous/rendezvous/netio"
)

// httpShutdownTimeout bounds how long closing the HTTP server waits for
// connections still answering a request.
const httpShutdownTimeout = 5 * time.Second

// server is the running process: the store, the UDP mediator, the HTTP API
// and its listener, built by start in that order. Its fields are set once by
// start and read afterwards; close is called once, from run's goroutine.
type server struct {
	log    *slog.Logger
	limits engine.Limits
	store  engine.Store
	// stats serves the store figures of scrapes, probes and admin stats,
	// read at most once a second (httpapi.StoreStats).
	stats    *httpapi.StoreStats
	med      *netio.Mediator
	http     *fasthttp.Server
	ln       *httpapi.Listener
	conns    httpapi.ConnLimits
	fds      fdLimit
	serveErr chan error // receives the HTTP server's Serve result, once
	// metricsHTTP and metricsLn serve --metrics-addr; nil without it.
	// Their Serve result goes to serveErr too.
	metricsHTTP *fasthttp.Server
	metricsLn   net.Listener

	httpAddr     net.Addr
	udpAddrs     []netip.AddrPort
	mediatorAddr string
	// devTokens holds the --dev principals' bearer tokens by role
	// ("publisher", "client", "operator"); nil with a principals file.
	// They are printed once to stdout and never logged.
	devTokens map[string]string
	// stopHangup ends the SIGHUP watch (principals reload) that start began.
	stopHangup func()
	// stopPrincipalsSync ends the poll of the deployment's principals
	// reload mark (a no-op without one).
	stopPrincipalsSync func()
	// closeStore releases the store's connection (a no-op for memory).
	closeStore func()
	// instance is the store's registry with --store redis; nil otherwise.
	instance *redisstore.Store
	// stopWatch ends the log of followed promotions (redis_log.go); nil
	// without Sentinel.
	stopWatch func()
}

// start builds and binds everything but does not yet serve UDP (run calls
// s.med.Start after the "listening" log line). On error whatever was bound
// is closed again.
func start(c *config, log *slog.Logger) (*server, error) {
	s := &server{log: log, limits: c.Limits, serveErr: make(chan error, 2), fds: raiseFDLimit()}
	s.conns = httpapi.ConnLimits{MaxConns: c.HTTPMaxConns, MaxConnsPerIP: c.HTTPMaxConnsPerIP}
	if s.conns.MaxConns == 0 {
		s.conns.MaxConns = autoMaxConns(s.fds.after)
	}
	keys := engine.RandomKeyring()
	if c.CapabilityKey != nil {
		keys = engine.NewKeyring(*c.CapabilityKey)
	}
	var principals *httpapi.Principals
	if c.Principals != "" {
		p, err := httpapi.LoadPrincipals(c.Principals)
		if err != nil {
			return nil, &settingError{"principals", c.sourceOf("principals"), err}
		}
		principals = p
	} else {
		principals, s.devTokens = httpapi.DevPrincipals()
	}
	store, closeStore, err := openStore(c, keys)
	if err != nil {
		return nil, err
	}
	s.store, s.closeStore = store, closeStore

	// The Redis store forwards pushed datagrams between instances, so each
	// leaves from the instance the peer's NAT mapping points at.
	forwarder, _ := store.(netio.Forwarder)
	netSet, httpSet := metrics.NewSet(), metrics.NewSet()
	s.stats = httpapi.NewStoreStats(store, 0)
	expo := newExposition(httpSet, netSet, newProcessMetrics(s.stats, c.Store))
	s.med, err = netio.NewMediator(netio.Config{
		Addrs:           c.UDPAddrs,
		Sockets:         c.UDPSockets,
		RecvBuffer:      c.UDPRecvBuffer,
		SendBuffer:      c.UDPSendBuffer,
		ErrorRate:       c.UDPErrorRate,
		ErrorBurst:      c.UDPErrorBurst,
		Portable:        c.UDPPortable,
		Forwarder:       forwarder,
		Metrics:         netSet,
		Logger:          log.With("component", "netio"),
		Tenants:         principals.Tenants(), // punch outcome series from the start
		RelayAllowPeers: c.Turn.AllowPeers,

		// A Redis commit is a round trip: read the next batch meanwhile.
		Overlap:      c.Store == storeRedis,
		CommitLinger: c.UDPCommitLinger,
	}, store, keys)
	if err != nil {
		// parseConfig checked the settings NewMediator checks; a ConfigError
		// still names its own setting.
		setting := "udp-addr"
		var ce *engine.ConfigError
		if errors.As(err, &ce) {
			setting = ce.Setting
		}
		closeStore()
		return nil, &settingError{setting, c.sourceOf(setting), fmt.Errorf("cannot start the UDP mediator: %w", err)}
	}
	s.udpAddrs = s.med.LocalAddrs()
	s.mediatorAddr = c.MediatorAddr
	if s.mediatorAddr == "" {
		s.mediatorAddr = s.udpAddrs[0].String()
	}
	if err := s.joinDeployment(); err != nil {
		s.closeMediator()
		_, setting := redisClientOption(c)
		return nil, &settingError{setting, c.sourceOf(setting), fmt.Errorf("cannot register the instance: %w", err)}
	}
	s.watchPrimary(c)

	// With several instances a reload asked of one reaches every other.
	var psync *principalsSync
	var announce func()
	if s.instance != nil && c.Principals != "" {
		psync = newPrincipalsSync(s.instance, log.With("component", "principals"))
		announce = psync.announce
	}

	relay, err := c.Turn.issuer()
	if err != nil {
		s.closeMediator()
		return nil, &settingError{"turn-secret-file", c.sourceOf("turn-secret-file"), err}
	}
	api, err := httpapi.New(httpapi.Config{
		Store:                     store,
		Keys:                      keys,
		Limits:                    c.Limits,
		Principals:                principals,
		Offerer:                   s.med,
		MediatorAddr:              s.mediatorAddr,
		Logger:                    log.With("component", "httpapi"),
		Metrics:                   httpSet,
		WritePrometheus:           expo.write,
		PrincipalsFile:            c.Principals, // re-read on SIGHUP and by the reload route
		PrincipalsReloaded:        announce,
		Relay:                     relay,
		RelayCredentialsPerMinute: c.Turn.PerMinute,
		StoreStats:                s.stats,
	})
	if err != nil {
		s.closeMediator()
		return nil, fmt.Errorf("cannot create the HTTP API: %w", err)
	}
	// Without SO_REUSEPORT (net.Listen sets only SO_REUSEADDR) the bind
	// fails when any other socket listens on the port, so the HTTP port is
	// ours alone; the error says so.
	ln, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		s.closeMediator()
		if errors.Is(err, syscall.EADDRINUSE) {
			err = fmt.Errorf("another process holds TCP port %s: %w", c.HTTPAddr, err)
		}
		return nil, &settingError{"http-addr", c.sourceOf("http-addr"), fmt.Errorf("cannot listen: %w", err)}
	}
	s.httpAddr = ln.Addr()
	s.ln, err = api.NewListener(ln, s.conns)
	if err != nil {
		_ = ln.Close() // never used
		s.closeMediator()
		return nil, fmt.Errorf("cannot wrap the HTTP listener: %w", err)
	}
	if c.MetricsAddr != "" {
		s.metricsLn, err = net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			_ = s.ln.Close() // nothing was served on it yet
			s.closeMediator()
			return nil, &settingError{"metrics-addr", c.sourceOf("metrics-addr"), fmt.Errorf("cannot listen: %w", err)}
		}
		s.metricsHTTP = newMetricsServer(expo, log.With("component", "metrics"))
		go func() { s.serveErr <- s.metricsHTTP.Serve(s.metricsLn) }()
	}
	s.http = api.NewServer()
	// The listener bounds connections; fasthttp's own bound (which answers
	// 503 and logs) must never bite first. It frees a connection's worker a
	// moment after the connection's Close, which the listener counts, hence
	// the slack.
	s.http.Concurrency = 2 * s.conns.MaxConns
	go func() { s.serveErr <- s.http.Serve(s.ln) }()
	s.stopHangup = reloadOnHangup(api, log)
	s.stopPrincipalsSync = func() {}
	if psync != nil {
		go psync.run(api)
		s.stopPrincipalsSync = psync.close
	}
	return s, nil
}

// close stops the HTTP servers (bounded by httpShutdownTimeout), then the
// mediator. Called once.
func (s *server) close() {
	s.stopHangup()
	s.stopPrincipalsSync()
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
	defer cancel()
	s.shutdown(ctx, s.http, s.ln, "HTTP")
	if s.metricsHTTP != nil {
		s.shutdown(ctx, s.metricsHTTP, s.metricsLn, "metrics")
	}
	s.closeMediator()
}

// shutdown stops one server serving ln and waits for its Serve result.
func (s *server) shutdown(ctx context.Context, srv *fasthttp.Server, ln net.Listener, what string) {
	if err := srv.ShutdownWithContext(ctx); err != nil {
		s.log.Warn(what+" connections still open at shutdown", "err", err)
	}
	// Shutdown does not close a listener Serve has not picked up yet; the
	// error of a second close is expected and meaningless.
	_ = ln.Close()
	<-s.serveErr
}

// closeMediator closes the UDP sockets, then the store the mediator used.
func (s *server) closeMediator() {
	if s.stopWatch != nil {
		s.stopWatch()
	}
	s.leaveDeployment()
	if err := s.med.Close(); err != nil {
		s.log.Warn("closing the UDP sockets failed", "err", err)
	}
	s.closeStore()
}

// udpList renders bound UDP addresses as the comma-separated form
// --udp-addr takes.
func udpList(addrs []netip.AddrPort) string {
	b := make([]byte, 0, 64)
	for i, a := range addrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = a.AppendTo(b)
	}
	return string(b)
}
