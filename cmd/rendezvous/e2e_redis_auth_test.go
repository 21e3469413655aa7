package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestE2ERedisAuthAndDatabase: with --redis-password-file the server
// authenticates (AUTH) and with --redis-db it keeps its keys in that
// database only; without the password, or with a wrong one, it does not
// start, names the setting, and never prints the password.
func TestE2ERedisAuthAndDatabase(t *testing.T) {
	redistest.SkipIfMissing(t)
	const password, wrong = "e2e-redis-pass-0123456789", "not-the-pass-9876543210"
	srv, err := redistest.StartWith("--requirepass", password)
	if err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	args := redisArgsFor(t, srv)
	writePassword := func(pw string) string {
		f := filepath.Join(t.TempDir(), "redis-password")
		if err := os.WriteFile(f, []byte(pw+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	start := append([]string{"--dev", "--http-addr", "127.0.0.1:0", "--udp-addr", "127.0.0.1:0"}, args...)
	for name, extra := range map[string][]string{
		"no password":    nil,
		"wrong password": {"--redis-password-file", writePassword(wrong)},
	} {
		code, stdout, stderr := runBinary(t, nil, append(start, extra...)...)
		if code != exitFailure || !strings.Contains(stderr, "redis-addr") {
			t.Fatalf("%s: exit %d, want %d naming redis-addr:\n%s", name, code, exitFailure, stderr)
		}
		if strings.Contains(stdout+stderr, wrong) || strings.Contains(stdout+stderr, password) {
			t.Fatalf("%s: the output holds a password:\n%s", name, stderr)
		}
	}

	p := startProc(t, append(args, "--redis-password-file", writePassword(password), "--redis-db", "3")...)
	h := publishHost(t, p, "auth-db-1", "Behind AUTH")
	if h.pub.ListingID == "" {
		t.Fatal("no listing published")
	}
	if s := p.stderr.String(); strings.Contains(s, password) {
		t.Fatalf("the server's log holds the Redis password:\n%s", s)
	}
	for db, wantKeys := range map[int]bool{3: true, 0: false} {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, Password: password, SelectDB: db, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		n, err := c.Do(ctx, c.B().Dbsize().Build()).AsInt64()
		cancel()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if (n > 0) != wantKeys {
			t.Fatalf("database %d holds %d keys; keys expected: %v", db, n, wantKeys)
		}
	}
}
