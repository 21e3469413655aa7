package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio"
)

// Ceilings of the settings that are not store limits (engine.Limits.Validate
// checks those).
const (
	// UDP socket buffers are asked of the kernel, which caps them at
	// net.core.rmem_max / wmem_max; the sizes granted are logged at start.
	minUDPBuffer      = 4 << 10
	maxUDPBuffer      = 1 << 30
	maxErrorBurst     = 1 << 20
	maxErrorRate      = 1e6
	defaultErrorRate  = netio.DefaultErrorRate
	defaultErrorBurst = netio.DefaultErrorBurst
	envPrefix         = "RDV_"
	// defaultCommitLinger: see docs/operations.md (--udp-commit-linger).
	defaultCommitLinger = 2 * time.Millisecond
)

// config is the server's whole configuration, read once at start. It is not
// modified after parseConfig returns.
type config struct {
	HTTPAddr     string
	MetricsAddr  string // empty: /metrics only on HTTPAddr (with a global operator's token)
	UDPAddrs     []string
	MediatorAddr string // empty: advertise the first bound UDP address
	Principals   string // path; empty only with Dev
	Dev          bool
	LogFormat    string // "text" or "json"
	LogLevel     string

	Limits engine.Limits

	// HTTPMaxConns bounds open HTTP connections; 0: derived from the
	// open-file limit at start (autoMaxConns).
	HTTPMaxConns      int
	HTTPMaxConnsPerIP int // 0: no per-source bound

	UDPSockets    int
	UDPRecvBuffer int
	UDPSendBuffer int
	UDPErrorRate  float64
	UDPErrorBurst int
	UDPPortable   bool
	// UDPCommitLinger is netio.Config.CommitLinger, with --store redis.
	UDPCommitLinger time.Duration

	// Store is "memory" or "redis"; the Redis* settings are used with
	// "redis".
	Store     string
	RedisAddr string
	RedisName string
	RedisDB   int
	// RedisPasswordFile names the file RedisPassword was read from (never
	// logged); RedisPasswordShared is set when it is readable by group or
	// others (start logs a warning).
	RedisPasswordFile   string
	RedisPassword       string
	RedisPasswordShared bool
	// InstanceLease is the instance's registration lease with --store redis.
	InstanceLease time.Duration

	// RedisSentinels and RedisMaster, when set, replace RedisAddr: the
	// primary is the one these sentinels monitor under that name.
	RedisSentinels []string
	RedisMaster    string
	// RedisAcks makes acknowledged writes wait for replicas (redis_acks.go).
	RedisAcks redisAcks

	CapabilityKeyFile string
	// CapabilityKey is the key read from CapabilityKeyFile (nil: a random key
	// is made at start). Never logged.
	CapabilityKey *[32]byte
	// CapabilityKeyShared is set when the key file is readable by group or
	// others (start logs a warning).
	CapabilityKeyShared bool

	// Turn is the relay fallback (turn.go).
	Turn turnConfig

	// source tells, for each setting, whether the command line or the
	// environment gave it (absent: the default), for error messages.
	source map[string]string
}

// settingError names the setting a startup error is about.
type settingError struct {
	Setting string // the flag name, e.g. "max-listings"
	Source  string // "flag --max-listings", "RDV_MAX_LISTINGS" or "default"
	Err     error
}

func (e *settingError) Error() string {
	if e.Source == "default" {
		return fmt.Sprintf("invalid %s: %v", e.Setting, e.Err)
	}
	return fmt.Sprintf("invalid %s (%s): %v", e.Setting, e.Source, e.Err)
}

func (e *settingError) Unwrap() error { return e.Err }

// envName is the environment variable that sets flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// newFlagSet declares every setting on c. The FlagSet never prints: callers
// report its errors and the usage text themselves.
func newFlagSet(c *config) *flag.FlagSet {
	fs := flag.NewFlagSet("rendezvous", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	d := engine.DefaultLimits()
	l := &c.Limits

	fs.StringVar(&c.HTTPAddr, "http-addr", "127.0.0.1:8080", "HTTP listen address `host:port` (port 0: any free port)")
	fs.IntVar(&c.HTTPMaxConns, "http-max-conns", 0, fmt.Sprintf("open HTTP connections at once; further ones are closed on accept (0: the open-file limit minus a reserve of max(%d, limit/%d)); 0..%d", minFDReserve, fdReserveDenominator, maxHTTPConns))
	fs.IntVar(&c.HTTPMaxConnsPerIP, "http-max-conns-per-ip", defaultConnsPerIP, fmt.Sprintf("open HTTP connections per client IPv4 address or IPv6 /64 (0: no bound; behind a proxy every connection has the proxy's address); 0..%d", maxHTTPConns))
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "", "extra listen address `host:port` serving only /metrics, for scrapers without a token (default: none; /metrics on --http-addr takes a global operator's token)")
	fs.Func("udp-addr", "UDP mediator listen address `host:port`, or a comma-separated list (e.g. one IPv4 and one IPv6) (default 127.0.0.1:3478)", func(s string) error {
		addrs, err := splitAddrs(s)
		if err != nil {
			return err
		}
		c.UDPAddrs = addrs
		return nil
	})
	c.UDPAddrs = []string{"127.0.0.1:3478"}
	fs.StringVar(&c.MediatorAddr, "mediator-addr", "", "UDP `host:port` advertised to hosts and clients (default: the first bound UDP address)")
	fs.StringVar(&c.Principals, "principals", "", "principals `file` (JSON or YAML); required unless --dev")
	fs.BoolVar(&c.Dev, "dev", false, "development mode: without --principals, create a publisher, a client and an operator of tenant demo/dev and print their tokens once")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")

	fs.IntVar(&l.MaxListings, "max-listings", d.MaxListings, "ceiling of listings")
	fs.IntVar(&l.MaxPresence, "max-presence", d.MaxPresence, "ceiling of presence bindings")
	fs.IntVar(&l.MaxAttempts, "max-attempts", d.MaxAttempts, "ceiling of join attempts")
	fs.IntVar(&l.MaxReplay, "max-replay", d.MaxReplay, "ceiling of replay entries")
	fs.IntVar(&l.MaxRevocations, "max-revocations", d.MaxRevocations, "ceiling of principal revocations")
	fs.IntVar(&l.MaxIdempotency, "max-idempotency", d.MaxIdempotency, "ceiling of idempotency records")
	fs.DurationVar(&l.LeaseTTL, "lease-ttl", d.LeaseTTL, "listing lease lifetime (1s..60s)")
	fs.DurationVar(&l.PresenceTTL, "presence-ttl", d.PresenceTTL, "host presence lifetime (1s..20s)")
	fs.DurationVar(&l.AttemptTTL, "attempt-ttl", d.AttemptTTL, "join attempt lifetime (1s..30s)")
	fs.DurationVar(&l.ReplayTTL, "replay-ttl", d.ReplayTTL, "replay entry lifetime (1s..30s)")
	fs.DurationVar(&l.IdempotencyTTL, "idempotency-ttl", d.IdempotencyTTL, "idempotency record lifetime (1s..10m, at least lease-ttl and attempt-ttl)")
	fs.DurationVar(&l.DrainWindow, "drain-window", d.DrainWindow, "how long in-flight attempts may finish after drain begins (1s..30s)")
	fs.IntVar(&l.OwnerListingQuota, "owner-listing-quota", d.OwnerListingQuota, "listings per owner; not given: 100, at most --max-listings")
	fs.IntVar(&l.TenantListingQuota, "tenant-listing-quota", d.TenantListingQuota, "listings per tenant; not given: half of --max-listings")
	fs.IntVar(&l.TenantAttemptQuota, "tenant-attempt-quota", d.TenantAttemptQuota, "active join attempts per tenant; not given: half of --max-attempts")
	fs.IntVar(&l.SubjectAttemptQuota, "subject-attempt-quota", d.SubjectAttemptQuota, "active join attempts per principal; not given: a tenth of --max-attempts")
	fs.IntVar(&l.TenantIdempotencyQuota, "tenant-idempotency-quota", d.TenantIdempotencyQuota, "idempotency records per tenant; not given: half of --max-idempotency")
	fs.IntVar(&l.SubjectIdempotencyQuota, "subject-idempotency-quota", d.SubjectIdempotencyQuota, "idempotency records per principal; not given: a tenth of --max-idempotency")

	fs.Float64Var(&c.UDPErrorRate, "udp-error-rate", defaultErrorRate, "unsigned UDP error answers per second per source (IPv4 address, IPv6 /64)")
	fs.IntVar(&c.UDPErrorBurst, "udp-error-burst", defaultErrorBurst, "burst of unsigned UDP error answers per source")
	fs.IntVar(&c.UDPSockets, "udp-sockets", 0, fmt.Sprintf("UDP sockets per address (SO_REUSEPORT), each with its own reader; 0: one per CPU (GOMAXPROCS); 0..%d", netio.MaxSockets))
	fs.IntVar(&c.UDPRecvBuffer, "udp-recv-buffer", netio.DefaultBuffer, "UDP socket receive buffer `bytes` asked of the kernel (4096..1073741824)")
	fs.IntVar(&c.UDPSendBuffer, "udp-send-buffer", netio.DefaultBuffer, "UDP socket send buffer `bytes` asked of the kernel (4096..1073741824)")
	fs.DurationVar(&c.UDPCommitLinger, "udp-commit-linger", defaultCommitLinger, fmt.Sprintf("with --store redis, how long a small batch of UDP requests waits after the socket's previous commit for more to share its Redis call (0..%v; 0: never waits)", netio.MaxCommitLinger))
	fs.BoolVar(&c.UDPPortable, "udp-portable", false, "use the portable UDP batch path (x/net) instead of raw recvmmsg/sendmmsg")
	fs.StringVar(&c.Store, "store", storeMemory, "where state lives: memory (this process only) or redis (shared by every instance on --redis-addr and --redis-name)")
	fs.StringVar(&c.RedisAddr, "redis-addr", "127.0.0.1:6379", "Redis `host:port` with --store redis")
	fs.Func("redis-sentinel", "Sentinel `host:port` list, comma-separated, with --store redis: the store follows the primary they monitor under --redis-master (instead of --redis-addr)", func(s string) error {
		addrs, err := splitAddrs(s)
		c.RedisSentinels = addrs
		return err
	})
	fs.StringVar(&c.RedisMaster, "redis-master", "", "`name` of the primary the --redis-sentinel sentinels monitor")
	fs.StringVar(&c.RedisName, "redis-name", "rdv", "deployment `name` with --store redis: keys are rdv:{name}:...; 1-64 characters of [a-z0-9._-]")
	fs.IntVar(&c.RedisDB, "redis-db", 0, fmt.Sprintf("Redis database `number` with --store redis (SELECT); 0..%d", maxRedisDB))
	fs.StringVar(&c.RedisPasswordFile, "redis-password-file", "", "`file` holding the Redis password (AUTH, to the data nodes and to the --redis-sentinel sentinels alike) with --store redis; a trailing newline is ignored (default: no AUTH)")
	fs.DurationVar(&c.InstanceLease, "instance-lease", defaultInstanceLease, fmt.Sprintf("with --store redis, the lease of this instance's registration (%v..%v): it stops serving when it could not renew for two thirds of it, and its hosts move to another instance when it expires", minInstanceLease, maxInstanceLease))
	fs.StringVar(&c.CapabilityKeyFile, "capability-key-file", "", "`file` holding the capability key (32 raw bytes or 64 hex characters); default: a random key per start, so a restart invalidates every capability")
	redisAckFlags(fs, &c.RedisAcks)
	turnFlags(fs, &c.Turn)
	return fs
}

// parseConfig reads args, then the RDV_* environment for every flag not
// given on the command line, then validates. Errors are *settingError
// naming the setting, or flag.ErrHelp.
func parseConfig(args []string, env func(string) string) (*config, error) {
	c := &config{source: map[string]string{}}
	fs := newFlagSet(c)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, flagParseError(fs, err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (settings are flags: see --help)", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) { c.source[f.Name] = "flag --" + f.Name })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if envErr != nil || c.source[f.Name] != "" {
			return
		}
		name := envName(f.Name)
		v := env(name)
		if v == "" {
			return
		}
		c.source[f.Name] = name
		if err := fs.Set(f.Name, v); err != nil {
			envErr = &settingError{f.Name, name, err}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	c.defaultQuotas()
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// defaultQuotas sets every quota neither flag nor environment gave to its
// default share of the pools as configured (engine.Limits.DefaultShares),
// so lowering a pool lowers its default quotas with it. A quota given
// explicitly is kept, and validate rejects it if it is above its pool.
func (c *config) defaultQuotas() {
	l := &c.Limits
	shares := l.DefaultShares()
	for _, q := range []struct {
		name  string
		quota *int
		share int
	}{
		{"owner-listing-quota", &l.OwnerListingQuota, shares.OwnerListingQuota},
		{"tenant-listing-quota", &l.TenantListingQuota, shares.TenantListingQuota},
		{"tenant-attempt-quota", &l.TenantAttemptQuota, shares.TenantAttemptQuota},
		{"subject-attempt-quota", &l.SubjectAttemptQuota, shares.SubjectAttemptQuota},
		{"tenant-idempotency-quota", &l.TenantIdempotencyQuota, shares.TenantIdempotencyQuota},
		{"subject-idempotency-quota", &l.SubjectIdempotencyQuota, shares.SubjectIdempotencyQuota},
	} {
		if c.source[q.name] == "" {
			*q.quota = q.share
		}
	}
}

// flagParseError turns the flag package's error into a settingError when it
// names a flag.
func flagParseError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	// The flag package reports `invalid value "x" for flag -name: reason`.
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		if j := strings.Index(rest, ": "); j >= 0 && fs.Lookup(rest[:j]) != nil {
			return &settingError{rest[:j], "flag --" + rest[:j], errors.New(strings.TrimPrefix(msg[:i], "invalid value ") + " " + rest[j+2:])}
		}
	}
	return fmt.Errorf("%v (see --help)", err)
}

func (c *config) sourceOf(name string) string {
	if s := c.source[name]; s != "" {
		return s
	}
	return "default"
}

func (c *config) bad(name string, format string, args ...any) error {
	return &settingError{name, c.sourceOf(name), fmt.Errorf(format, args...)}
}

// validate checks every setting; the first bad one is reported by name.
func (c *config) validate() error {
	if err := c.Limits.Validate(); err != nil {
		var ce *engine.ConfigError
		if errors.As(err, &ce) {
			return &settingError{ce.Setting, c.sourceOf(ce.Setting), errors.New(ce.Reason)}
		}
		return err
	}
	if err := checkHostPort(c.HTTPAddr, true); err != nil {
		return c.bad("http-addr", "%v", err)
	}
	if c.HTTPMaxConns < 0 || c.HTTPMaxConns > maxHTTPConns {
		return c.bad("http-max-conns", "%d is not in 0..%d", c.HTTPMaxConns, maxHTTPConns)
	}
	if c.HTTPMaxConnsPerIP < 0 || c.HTTPMaxConnsPerIP > maxHTTPConns {
		return c.bad("http-max-conns-per-ip", "%d is not in 0..%d", c.HTTPMaxConnsPerIP, maxHTTPConns)
	}
	if c.MetricsAddr != "" {
		if err := checkHostPort(c.MetricsAddr, true); err != nil {
			return c.bad("metrics-addr", "%v", err)
		}
	}
	for _, a := range c.UDPAddrs {
		if ap, err := netip.ParseAddrPort(a); err != nil || ap.Addr().Zone() != "" {
			return c.bad("udp-addr", "%q is not ip:port (an IP address, not a host name)", a)
		}
	}
	if c.MediatorAddr != "" {
		if err := checkHostPort(c.MediatorAddr, false); err != nil {
			return c.bad("mediator-addr", "%v", err)
		}
	}
	if c.Principals == "" && !c.Dev {
		return c.bad("principals", "a principals file is required (or --dev for development tokens)")
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		return c.bad("log-format", "%q is not text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return c.bad("log-level", "%q is not debug, info, warn or error", c.LogLevel)
	}
	if c.UDPSockets < 0 || c.UDPSockets > netio.MaxSockets {
		return c.bad("udp-sockets", "%d is not in 0..%d", c.UDPSockets, netio.MaxSockets)
	}
	if c.UDPCommitLinger < 0 || c.UDPCommitLinger > netio.MaxCommitLinger {
		return c.bad("udp-commit-linger", "%v is not in 0..%v", c.UDPCommitLinger, netio.MaxCommitLinger)
	}
	if c.UDPRecvBuffer < minUDPBuffer || c.UDPRecvBuffer > maxUDPBuffer {
		return c.bad("udp-recv-buffer", "%d is not in %d..%d", c.UDPRecvBuffer, minUDPBuffer, maxUDPBuffer)
	}
	if c.UDPSendBuffer < minUDPBuffer || c.UDPSendBuffer > maxUDPBuffer {
		return c.bad("udp-send-buffer", "%d is not in %d..%d", c.UDPSendBuffer, minUDPBuffer, maxUDPBuffer)
	}
	// The negated comparison also rejects NaN.
	if !(c.UDPErrorRate > 0 && c.UDPErrorRate <= maxErrorRate) {
		return c.bad("udp-error-rate", "%v is not in (0, %v]", c.UDPErrorRate, maxErrorRate)
	}
	if c.UDPErrorBurst < 1 || c.UDPErrorBurst > maxErrorBurst {
		return c.bad("udp-error-burst", "%d is not in 1..%d", c.UDPErrorBurst, maxErrorBurst)
	}
	switch c.Store {
	case storeMemory:
	case storeRedis:
		if err := checkHostPort(c.RedisAddr, false); err != nil {
			return c.bad("redis-addr", "%v", err)
		}
		if err := c.validateSentinel(); err != nil {
			return err
		}
		if err := c.validateRedisAcks(); err != nil {
			return err
		}
		// A deployment name follows the rule of a tenant's parts.
		if (engine.Tenant{Game: c.RedisName, Env: c.RedisName}).Validate() != nil {
			return c.bad("redis-name", "%q is not 1-64 characters of [a-z0-9._-]", c.RedisName)
		}
		if c.CapabilityKeyFile == "" {
			return c.bad("capability-key-file", "--store redis needs the capability key file every instance shares")
		}
		if c.RedisDB < 0 || c.RedisDB > maxRedisDB {
			return c.bad("redis-db", "%d is not in 0..%d", c.RedisDB, maxRedisDB)
		}
		if c.InstanceLease < minInstanceLease || c.InstanceLease > maxInstanceLease {
			return c.bad("instance-lease", "%v is not in %v..%v", c.InstanceLease, minInstanceLease, maxInstanceLease)
		}
		if c.RedisPasswordFile != "" {
			pw, shared, err := readRedisPassword(c.RedisPasswordFile)
			if err != nil {
				return c.bad("redis-password-file", "%v", err)
			}
			c.RedisPassword, c.RedisPasswordShared = pw, shared
		}
	default:
		return c.bad("store", "%q is not memory or redis", c.Store)
	}
	if c.CapabilityKeyFile != "" {
		key, shared, err := readCapabilityKey(c.CapabilityKeyFile)
		if err != nil {
			return c.bad("capability-key-file", "%v", err)
		}
		c.CapabilityKey, c.CapabilityKeyShared = key, shared
	}
	return c.validateTurn()
}

// splitAddrs splits a comma-separated address list, rejecting empty items.
func splitAddrs(s string) ([]string, error) {
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, errors.New("empty address in list")
		}
		out = append(out, p)
	}
	return out, nil
}

// checkHostPort accepts host:port with a numeric port (the host may be a
// name); listen addresses may use port 0 and an empty host (all
// interfaces), advertised ones may not.
func checkHostPort(s string, listen bool) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("%q: port must be a number 0..65535", s)
	}
	if !listen && (p == 0 || host == "") {
		return fmt.Errorf("%q: an advertised address needs a host and a non-zero port", s)
	}
	return nil
}

// readCapabilityKey reads 32 raw bytes, or 64 hex characters (surrounding
// white space ignored). shared reports a file readable by group or others.
// The error never quotes the file's content.
func readCapabilityKey(path string) (key *[32]byte, shared bool, err error) {
	b, shared, err := readSecretFile(path, 257)
	if err != nil {
		return nil, false, err
	}
	var k [32]byte
	if len(b) == 32 {
		copy(k[:], b)
		return &k, shared, nil
	}
	t := strings.TrimSpace(string(b))
	if len(t) == 64 {
		if _, err := hex.Decode(k[:], []byte(t)); err == nil {
			return &k, shared, nil
		}
	}
	return nil, false, fmt.Errorf("must hold 32 raw bytes or 64 hex characters (it holds %d bytes)", len(b))
}
