package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/internal/version"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // could not start, the HTTP server failed, or a second signal
	exitUsage   = 2 // a bad setting
)

// run is the whole server: it parses args and env, starts, serves until ctx
// is done (main cancels it on the first SIGTERM or SIGINT), drains and
// returns the exit status. Logs go to stderr; stdout gets --help and the
// --dev banner only.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "failover" {
		return runFailover(ctx, args[1:], env, stdout, stderr)
	}
	if version.Requested(args) {
		fmt.Fprint(stdout, version.Line("rendezvous"))
		return exitOK
	}
	c, err := parseConfig(args, env)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(stdout)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rendezvous: %v\n", err)
		return exitUsage
	}
	log := newLogger(c, stderr)
	slog.SetDefault(log)
	s, err := start(c, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return exitFailure
	}
	// The first log line after start: it names the bound addresses (port 0
	// in a setting is resolved here).
	attrs := []any{"http", s.httpAddr.String(), "udp", udpList(s.udpAddrs),
		"mediator", s.mediatorAddr, "instance", s.store.InstanceID().String()}
	if s.metricsLn != nil {
		attrs = append(attrs, "metrics", s.metricsLn.Addr().String())
	}
	log.Info("listening", attrs...)
	s.logSettings(c)
	if s.devTokens != nil {
		writeDevBanner(stdout, s.httpAddr.String(), s.mediatorAddr, s.devTokens)
	}
	s.med.Start()

	select {
	case <-ctx.Done():
		s.drain()
		s.close()
		log.Info("stopped")
		return exitOK
	case err := <-s.serveErr:
		s.serveErr <- err // close waits for it
		log.Error("HTTP server failed", "err", err)
		s.close()
		return exitFailure
	}
}

// logSettings records the effective settings (no secrets: the capability
// key is reported only as configured or random).
func (s *server) logSettings(c *config) {
	recv, send := s.med.BufferSizes()
	l := c.Limits
	principals := "dev"
	if c.Principals != "" {
		principals = c.Principals
	}
	key := "random"
	if c.CapabilityKey != nil {
		key = "configured"
	}
	s.log.Info("settings",
		"max_listings", l.MaxListings, "max_presence", l.MaxPresence, "max_attempts", l.MaxAttempts,
		"max_replay", l.MaxReplay, "max_revocations", l.MaxRevocations, "max_idempotency", l.MaxIdempotency,
		"lease_ttl", l.LeaseTTL.String(), "presence_ttl", l.PresenceTTL.String(), "attempt_ttl", l.AttemptTTL.String(),
		"replay_ttl", l.ReplayTTL.String(), "idempotency_ttl", l.IdempotencyTTL.String(), "drain_window", l.DrainWindow.String(),
		"owner_listing_quota", l.OwnerListingQuota, "tenant_listing_quota", l.TenantListingQuota,
		"tenant_attempt_quota", l.TenantAttemptQuota, "subject_attempt_quota", l.SubjectAttemptQuota,
		"tenant_idempotency_quota", l.TenantIdempotencyQuota, "subject_idempotency_quota", l.SubjectIdempotencyQuota,
		"udp_recv_buffer", recv, "udp_send_buffer", send,
		"udp_error_rate", c.UDPErrorRate, "udp_error_burst", c.UDPErrorBurst,
		"http_max_conns", s.conns.MaxConns, "http_max_conns_per_ip", s.conns.MaxConnsPerIP,
		"principals", principals, "capability_key", key, "store", c.Store)
	if c.Store == storeRedis {
		attrs := append(redisTarget(c, s.instance), "redis_name", c.RedisName, "redis_db", c.RedisDB,
			"redis_auth", c.RedisPasswordFile != "", "instance_lease", c.InstanceLease.String(), "epoch", s.instance.Epoch(),
			"library", redisstore.LibraryVersion())
		s.log.Info("redis store", attrs...)
	}
	if c.RedisPasswordShared {
		s.log.Warn("the Redis password file is readable by group or others; make it 0600", "file", c.RedisPasswordFile)
	}
	if c.CapabilityKeyShared {
		s.log.Warn("the capability key file is readable by group or others; make it 0600", "file", c.CapabilityKeyFile)
	}
	s.logTurn(&c.Turn)
	s.logFDLimit()
	if recv < c.UDPRecvBuffer || send < c.UDPSendBuffer {
		s.log.Warn("the kernel granted smaller UDP buffers than asked; raise net.core.rmem_max / wmem_max",
			"recv_asked", c.UDPRecvBuffer, "recv", recv, "send_asked", c.UDPSendBuffer, "send", send)
	}
}
