package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/version"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig([]string{"--dev"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits != engine.DefaultLimits() {
		t.Fatalf("limits %+v, want the defaults", c.Limits)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || !reflect.DeepEqual(c.UDPAddrs, []string{"127.0.0.1:3478"}) || c.MediatorAddr != "" || c.MetricsAddr != "" {
		t.Fatalf("addresses %q %q %q %q", c.HTTPAddr, c.UDPAddrs, c.MediatorAddr, c.MetricsAddr)
	}
	if c.LogFormat != "text" || c.UDPSockets != 0 || c.UDPCommitLinger != defaultCommitLinger || c.UDPErrorRate != 10 || c.UDPErrorBurst != 20 || c.CapabilityKey != nil ||
		c.HTTPMaxConns != 0 || c.HTTPMaxConnsPerIP != defaultConnsPerIP ||
		c.Store != "memory" || c.RedisAddr != "127.0.0.1:6379" || c.RedisName != "rdv" {
		t.Fatalf("defaults %+v", c)
	}
}

// everySetting gives each flag a valid, non-default value, as env.
func everySetting(t *testing.T) map[string]string {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(pwFile, []byte("env-pass\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"RDV_HTTP_ADDR": "127.0.0.1:9", "RDV_METRICS_ADDR": "127.0.0.1:10", "RDV_UDP_ADDR": "127.0.0.1:1, [::1]:2",
		"RDV_MEDIATOR_ADDR": "rdv.example.com:3478", "RDV_PRINCIPALS": "/etc/rendezvous/principals.json",
		"RDV_DEV": "true", "RDV_LOG_FORMAT": "json", "RDV_LOG_LEVEL": "debug",
		"RDV_MAX_LISTINGS": "11", "RDV_MAX_PRESENCE": "12", "RDV_MAX_ATTEMPTS": "13",
		"RDV_MAX_REPLAY": "14", "RDV_MAX_REVOCATIONS": "15", "RDV_MAX_IDEMPOTENCY": "16",
		"RDV_LEASE_TTL": "50s", "RDV_PRESENCE_TTL": "15s", "RDV_ATTEMPT_TTL": "25s",
		"RDV_REPLAY_TTL": "20s", "RDV_IDEMPOTENCY_TTL": "5m", "RDV_DRAIN_WINDOW": "10s",
		"RDV_OWNER_LISTING_QUOTA": "3", "RDV_TENANT_ATTEMPT_QUOTA": "4", "RDV_SUBJECT_ATTEMPT_QUOTA": "2",
		"RDV_TENANT_LISTING_QUOTA": "9", "RDV_TENANT_IDEMPOTENCY_QUOTA": "8", "RDV_SUBJECT_IDEMPOTENCY_QUOTA": "1",
		"RDV_UDP_ERROR_RATE": "2.5", "RDV_UDP_ERROR_BURST": "7", "RDV_UDP_SOCKETS": "2",
		"RDV_UDP_RECV_BUFFER": "65536", "RDV_UDP_SEND_BUFFER": "32768", "RDV_UDP_PORTABLE": "true",
		"RDV_UDP_COMMIT_LINGER":   "3ms",
		"RDV_CAPABILITY_KEY_FILE": keyFile,
		"RDV_HTTP_MAX_CONNS":      "500", "RDV_HTTP_MAX_CONNS_PER_IP": "0",
		"RDV_STORE": "redis", "RDV_REDIS_ADDR": "redis.example.com:6380", "RDV_REDIS_NAME": "eu-1",
		"RDV_REDIS_DB": "5", "RDV_REDIS_PASSWORD_FILE": pwFile,
		"RDV_TURN_URI": "turn:relay.example", "RDV_TURN_SECRET_FILE": pwFile, "RDV_TURN_TTL": "1m", // turn_test.go checks them
		"RDV_RELAY_ALLOW_PEERS": "10.0.0.0/8", "RDV_RELAY_CREDENTIALS_PER_MINUTE": "500",
		"RDV_INSTANCE_LEASE": "5s", "RDV_REDIS_ACK_REPLICAS": "2", "RDV_REDIS_ACK_TIMEOUT": "300ms",
	}
}

func TestParseConfigEnvironment(t *testing.T) {
	env := everySetting(t)
	// Every flag is covered, so a new flag without an env test fails here.
	newFlagSet(&config{}).VisitAll(func(f *flag.Flag) {
		if _, ok := env[envName(f.Name)]; !ok && !envTestedElsewhere[f.Name] {
			t.Errorf("no environment test for --%s", f.Name)
		}
	})
	c, err := parseConfig(nil, envOf(env))
	if err != nil {
		t.Fatal(err)
	}
	wantLimits := engine.Limits{
		MaxListings: 11, MaxPresence: 12, MaxAttempts: 13, MaxReplay: 14, MaxRevocations: 15, MaxIdempotency: 16,
		LeaseTTL: 50 * time.Second, PresenceTTL: 15 * time.Second, AttemptTTL: 25 * time.Second,
		ReplayTTL: 20 * time.Second, IdempotencyTTL: 5 * time.Minute, DrainWindow: 10 * time.Second,
		OwnerListingQuota: 3, TenantAttemptQuota: 4, SubjectAttemptQuota: 2, TenantListingQuota: 9, TenantIdempotencyQuota: 8,
		SubjectIdempotencyQuota: 1,
	}
	if c.Limits != wantLimits {
		t.Fatalf("limits %+v, want %+v", c.Limits, wantLimits)
	}
	var key [32]byte
	for i := range key {
		key[i] = 0xab
	}
	if c.HTTPAddr != "127.0.0.1:9" || c.MetricsAddr != "127.0.0.1:10" || !reflect.DeepEqual(c.UDPAddrs, []string{"127.0.0.1:1", "[::1]:2"}) ||
		c.MediatorAddr != "rdv.example.com:3478" || c.Principals != "/etc/rendezvous/principals.json" || !c.Dev ||
		c.LogFormat != "json" || c.LogLevel != "debug" || c.UDPErrorRate != 2.5 || c.UDPErrorBurst != 7 ||
		c.UDPSockets != 2 || c.UDPRecvBuffer != 65536 || c.UDPSendBuffer != 32768 || !c.UDPPortable ||
		c.UDPCommitLinger != 3*time.Millisecond ||
		c.CapabilityKey == nil || *c.CapabilityKey != key || c.HTTPMaxConns != 500 || c.HTTPMaxConnsPerIP != 0 ||
		c.Store != "redis" || c.RedisAddr != "redis.example.com:6380" || c.RedisName != "eu-1" ||
		c.RedisDB != 5 || c.RedisPassword != "env-pass" {
		t.Fatalf("config from the environment: %+v", c)
	}
}

func TestParseConfigFlagWins(t *testing.T) {
	env := envOf(map[string]string{"RDV_MAX_LISTINGS": "5", "RDV_LEASE_TTL": "61s", "RDV_DEV": "true"})
	c, err := parseConfig([]string{"--max-listings", "7", "--lease-ttl", "30s"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxListings != 7 || c.Limits.LeaseTTL != 30*time.Second || !c.Dev {
		t.Fatalf("max-listings %d lease-ttl %v dev %v, want 7, 30s (flags) and true (env)", c.Limits.MaxListings, c.Limits.LeaseTTL, c.Dev)
	}
}

// Quotas not given follow their pools, so lowering a pool alone is a valid
// configuration; quotas given are kept.
func TestParseConfigQuotasFollowPools(t *testing.T) {
	c, err := parseConfig([]string{"--dev", "--max-listings", "50", "--max-attempts", "40", "--max-idempotency", "30",
		"--tenant-attempt-quota", "40"}, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	l := c.Limits
	if l.OwnerListingQuota != 50 || l.TenantListingQuota != 25 || l.TenantAttemptQuota != 40 ||
		l.SubjectAttemptQuota != 4 || l.TenantIdempotencyQuota != 15 {
		t.Fatalf("quotas %+v, want 50, 25, 40 (given), 4, 15", l)
	}
}

func TestParseConfigRejects(t *testing.T) {
	f := func(args []string, env map[string]string, setting, source string) {
		t.Helper()
		_, err := parseConfig(append([]string{"--dev"}, args...), envOf(env))
		var se *settingError
		if !errors.As(err, &se) {
			t.Fatalf("%v %v: error %v, want a settingError", args, env, err)
		}
		if se.Setting != setting || se.Source != source {
			t.Fatalf("%v %v: error names %s from %s, want %s from %s (%v)", args, env, se.Setting, se.Source, setting, source, err)
		}
		if !strings.Contains(err.Error(), setting) {
			t.Fatalf("message %q does not name %s", err, setting)
		}
	}
	e := map[string]string{}
	f(nil, map[string]string{"RDV_MAX_LISTINGS": "0"}, "max-listings", "RDV_MAX_LISTINGS")
	f([]string{"--max-presence", "-1"}, e, "max-presence", "flag --max-presence")
	f([]string{"--max-attempts", "16777217"}, e, "max-attempts", "flag --max-attempts")
	f(nil, map[string]string{"RDV_MAX_REPLAY": "many"}, "max-replay", "RDV_MAX_REPLAY")
	f([]string{"--max-revocations", "x"}, e, "max-revocations", "flag --max-revocations")
	f([]string{"--max-idempotency", "0"}, e, "max-idempotency", "flag --max-idempotency")
	f([]string{"--lease-ttl", "61s"}, e, "lease-ttl", "flag --lease-ttl")
	f([]string{"--presence-ttl", "500ms"}, e, "presence-ttl", "flag --presence-ttl")
	f([]string{"--attempt-ttl", "31s"}, e, "attempt-ttl", "flag --attempt-ttl")
	f([]string{"--replay-ttl", "-1s"}, e, "replay-ttl", "flag --replay-ttl")
	f([]string{"--idempotency-ttl", "11m"}, e, "idempotency-ttl", "flag --idempotency-ttl")
	f([]string{"--idempotency-ttl", "40s"}, e, "idempotency-ttl", "flag --idempotency-ttl") // shorter than the lease
	f([]string{"--drain-window", "31s"}, e, "drain-window", "flag --drain-window")
	f([]string{"--owner-listing-quota", "0"}, e, "owner-listing-quota", "flag --owner-listing-quota")
	f(nil, map[string]string{"RDV_TENANT_ATTEMPT_QUOTA": "0"}, "tenant-attempt-quota", "RDV_TENANT_ATTEMPT_QUOTA")
	// A quota given above its pool is named; one not given follows its pool.
	f([]string{"--max-attempts", "100", "--subject-attempt-quota", "101"}, e, "subject-attempt-quota", "flag --subject-attempt-quota")
	f(nil, map[string]string{"RDV_TENANT_LISTING_QUOTA": "25001"}, "tenant-listing-quota", "RDV_TENANT_LISTING_QUOTA")
	f([]string{"--max-idempotency", "10", "--tenant-idempotency-quota", "11"}, e, "tenant-idempotency-quota", "flag --tenant-idempotency-quota")
	f([]string{"--tenant-attempt-quota", "10001"}, e, "tenant-attempt-quota", "flag --tenant-attempt-quota")
	f([]string{"--http-addr", "localhost"}, e, "http-addr", "flag --http-addr")
	f([]string{"--http-addr", "127.0.0.1:70000"}, e, "http-addr", "flag --http-addr")
	f([]string{"--http-max-conns", "-1"}, e, "http-max-conns", "flag --http-max-conns")
	f(nil, map[string]string{"RDV_HTTP_MAX_CONNS": "10000001"}, "http-max-conns", "RDV_HTTP_MAX_CONNS")
	f([]string{"--http-max-conns-per-ip", "-5"}, e, "http-max-conns-per-ip", "flag --http-max-conns-per-ip")
	f(nil, map[string]string{"RDV_HTTP_MAX_CONNS_PER_IP": "many"}, "http-max-conns-per-ip", "RDV_HTTP_MAX_CONNS_PER_IP")
	f([]string{"--metrics-addr", "127.0.0.1"}, e, "metrics-addr", "flag --metrics-addr")
	f(nil, map[string]string{"RDV_METRICS_ADDR": "127.0.0.1:65536"}, "metrics-addr", "RDV_METRICS_ADDR")
	f([]string{"--udp-addr", "127.0.0.1:1,"}, e, "udp-addr", "flag --udp-addr")
	f(nil, map[string]string{"RDV_UDP_ADDR": "[::1]"}, "udp-addr", "RDV_UDP_ADDR")
	f([]string{"--mediator-addr", "example.com:0"}, e, "mediator-addr", "flag --mediator-addr")
	f([]string{"--mediator-addr", ":3478"}, e, "mediator-addr", "flag --mediator-addr")
	f([]string{"--log-format", "xml"}, e, "log-format", "flag --log-format")
	f([]string{"--log-level", "loud"}, e, "log-level", "flag --log-level")
	f([]string{"--udp-sockets", "257"}, e, "udp-sockets", "flag --udp-sockets")
	f([]string{"--udp-recv-buffer", "-1"}, e, "udp-recv-buffer", "flag --udp-recv-buffer")
	f([]string{"--udp-send-buffer", "2147483648"}, e, "udp-send-buffer", "flag --udp-send-buffer")
	f([]string{"--udp-error-rate", "0"}, e, "udp-error-rate", "flag --udp-error-rate")
	f([]string{"--udp-error-rate", "NaN"}, e, "udp-error-rate", "flag --udp-error-rate")
	f([]string{"--udp-error-burst", "0"}, e, "udp-error-burst", "flag --udp-error-burst")
	f([]string{"--udp-commit-linger", "11ms"}, e, "udp-commit-linger", "flag --udp-commit-linger")
	f(nil, map[string]string{"RDV_UDP_COMMIT_LINGER": "-1ms"}, "udp-commit-linger", "RDV_UDP_COMMIT_LINGER")
	f(nil, map[string]string{"RDV_UDP_PORTABLE": "maybe"}, "udp-portable", "RDV_UDP_PORTABLE")
	f([]string{"--capability-key-file", filepath.Join(t.TempDir(), "missing")}, e, "capability-key-file", "flag --capability-key-file")
	f([]string{"--store", "disk"}, e, "store", "flag --store")
	f(nil, map[string]string{"RDV_STORE": "redis"}, "capability-key-file", "default") // redis needs the shared key
	f([]string{"--store", "redis", "--redis-addr", "localhost"}, e, "redis-addr", "flag --redis-addr")
	f([]string{"--store", "redis"}, map[string]string{"RDV_REDIS_ADDR": ":6379"}, "redis-addr", "RDV_REDIS_ADDR")
	f([]string{"--store", "redis", "--redis-name", "a{b}"}, e, "redis-name", "flag --redis-name")
	f([]string{"--store", "redis"}, map[string]string{"RDV_REDIS_NAME": ""}, "capability-key-file", "default") // empty: unset, so the default name
	redis := []string{"--store", "redis", "--capability-key-file", testKeyFile(t)}
	f(append(redis, "--redis-db", "-1"), e, "redis-db", "flag --redis-db")
	f(redis, map[string]string{"RDV_REDIS_DB": "1048577"}, "redis-db", "RDV_REDIS_DB")
	f(append(redis, "--redis-password-file", filepath.Join(t.TempDir(), "missing")), e, "redis-password-file", "flag --redis-password-file")
	for name, content := range map[string]string{"empty": "", "newline only": "\n", "two lines": "a\nb\n", "too long": strings.Repeat("p", 513)} {
		pw := filepath.Join(t.TempDir(), "pw")
		if err := os.WriteFile(pw, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("password file %s", name)
		f(redis, map[string]string{"RDV_REDIS_PASSWORD_FILE": pw}, "redis-password-file", "RDV_REDIS_PASSWORD_FILE")
	}

	// Without --dev a principals file is required.
	_, err := parseConfig(nil, envOf(nil))
	var se *settingError
	if !errors.As(err, &se) || se.Setting != "principals" {
		t.Fatalf("no principals: error %v, want one naming principals", err)
	}
	// Positional arguments are not settings.
	if _, err := parseConfig([]string{"--dev", "extra"}, envOf(nil)); err == nil || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("positional argument: error %v", err)
	}
}

func TestReadCapabilityKey(t *testing.T) {
	dir := t.TempDir()
	n := 0
	f := func(content []byte, ok bool) {
		t.Helper()
		n++
		path := filepath.Join(dir, "key"+strings.Repeat("x", n))
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		key, shared, err := readCapabilityKey(path)
		if shared {
			t.Fatalf("a 0600 file is reported as shared")
		}
		if ok != (err == nil) {
			t.Fatalf("content of %d bytes: error %v, want ok=%v", len(content), err, ok)
		}
		if err != nil && len(content) > 4 && strings.Contains(err.Error(), string(content[:5])) {
			t.Fatalf("error %q quotes the key file", err)
		}
		if ok && key == nil {
			t.Fatalf("no key")
		}
	}
	raw := bytes.Repeat([]byte{0x9c}, 32)
	f(raw, true)
	f([]byte(strings.Repeat("0f", 32)), true)
	f([]byte("  "+strings.Repeat("A1", 32)+"\r\n"), true)
	f(raw[:31], false)
	f(append(raw, 0), false)
	f([]byte(strings.Repeat("0f", 31)+"0"), false)
	f([]byte(strings.Repeat("zz", 32)), false)
	f(nil, false)
	f(bytes.Repeat([]byte{'a'}, 4096), false)

	// A key others can read is accepted but reported.
	loose := filepath.Join(dir, "loose")
	if err := os.WriteFile(loose, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(loose, 0o644); err != nil { // WriteFile's mode is subject to the umask
		t.Fatal(err)
	}
	if key, shared, err := readCapabilityKey(loose); err != nil || key == nil || !shared {
		t.Fatalf("0644 key file: shared %v, error %v; want accepted and shared", shared, err)
	}
}

func TestRunHelpAndBadSettings(t *testing.T) {
	f := func(args []string, env map[string]string, code int, inStdout, inStderr string) {
		t.Helper()
		var out, errb bytes.Buffer
		got := run(context.Background(), args, envOf(env), &out, &errb)
		if got != code {
			t.Fatalf("%v %v: status %d, want %d; stderr %s", args, env, got, code, errb.String())
		}
		if !strings.Contains(out.String(), inStdout) || !strings.Contains(errb.String(), inStderr) {
			t.Fatalf("%v %v: stdout %q / stderr %q, want %q / %q", args, env, out.String(), errb.String(), inStdout, inStderr)
		}
		if code != exitOK && out.Len() != 0 {
			t.Fatalf("%v: a failed start wrote to stdout: %q", args, out.String())
		}
	}
	f([]string{"--help"}, nil, exitOK, "RDV_MAX_LISTINGS", "")
	f([]string{"-h"}, nil, exitOK, "--drain-window", "")
	f([]string{"--version"}, nil, exitOK, version.Line("rendezvous"), "")
	f([]string{"-version"}, nil, exitOK, version.Line("rendezvous"), "")
	f([]string{"--dev"}, map[string]string{"RDV_MAX_LISTINGS": "0"}, exitUsage, "", "invalid max-listings (RDV_MAX_LISTINGS)")
	f([]string{"--dev", "--lease-ttl", "61s"}, nil, exitUsage, "", "invalid lease-ttl (flag --lease-ttl)")
	f([]string{"--no-such-flag"}, nil, exitUsage, "", "no-such-flag")
}

func TestDocsNameEverySetting(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatalf("cannot read the operations guide: %v", err)
	}
	newFlagSet(&config{}).VisitAll(func(f *flag.Flag) {
		if !bytes.Contains(doc, []byte("--"+f.Name)) || !bytes.Contains(doc, []byte(envName(f.Name))) {
			t.Errorf("docs/operations.md does not document --%s / %s", f.Name, envName(f.Name))
		}
	})
}

func TestWaitDrained(t *testing.T) {
	f := func(inFlight []int, window time.Duration, reason string, left int) {
		t.Helper()
		st := &fakeStats{seq: inFlight}
		gotReason, gotLeft := waitDrained(st, time.Now().Add(window), time.Millisecond)
		if gotReason != reason || gotLeft != left {
			t.Fatalf("%v: %s %d, want %s %d", inFlight, gotReason, gotLeft, reason, left)
		}
	}
	f([]int{0}, time.Hour, "idle", 0)
	f([]int{3, 2, 1, 0}, time.Hour, "idle", 0)
	f([]int{2}, 0, "window", 2)
	f([]int{0}, -time.Second, "window", 0) // the window has passed: not idle even if empty
	f([]int{5}, 20*time.Millisecond, "window", 5)
}

// fakeStats reports InFlight from seq, repeating its last value.
type fakeStats struct {
	seq []int
	i   int
}

func (f *fakeStats) Stats() engine.Stats {
	n := f.seq[min(f.i, len(f.seq)-1)]
	f.i++
	return engine.Stats{InFlight: n}
}

// The default connection ceiling leaves a reserve of descriptors below the
// open-file limit, and a usable ceiling even at tiny limits.
func TestAutoMaxConns(t *testing.T) {
	for _, c := range []struct {
		limit uint64
		want  int
	}{
		{0, connsNoFDLimit}, {2, 1}, {100, 50}, {256, 192}, {1024, 896}, {65536, 57344}, {1 << 40, maxHTTPConns},
	} {
		if got := autoMaxConns(c.limit); got != c.want {
			t.Errorf("autoMaxConns(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

// TestParseConfigRedisPassword: the password is the file's one line without
// its line ending, and a file others can read is flagged for the warning.
func TestParseConfigRedisPassword(t *testing.T) {
	dir, redis := t.TempDir(), devRedisArgs(t)
	f := func(content string, mode os.FileMode, want string, shared bool) {
		t.Helper()
		pw := filepath.Join(dir, "pw")
		_ = os.Remove(pw)
		if err := os.WriteFile(pw, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		c, err := parseConfig(append(append([]string(nil), redis...), "--redis-password-file", pw, "--redis-db", "3"), envOf(nil))
		if err != nil {
			t.Fatal(err)
		}
		if c.RedisPassword != want || c.RedisPasswordShared != shared || c.RedisDB != 3 {
			t.Fatalf("%q (mode %v): password %q shared %v db %d, want %q %v 3", content, mode, c.RedisPassword, c.RedisPasswordShared, c.RedisDB, want, shared)
		}
	}
	f("s3cret", 0o600, "s3cret", false)
	f("s3cret\n", 0o600, "s3cret", false)
	f("s3cret\r\n", 0o640, "s3cret", true)
	f(" spaced pass ", 0o600, " spaced pass ", false)
}
