package redisstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
)

// TestReadOnlyDropsOnlySentinelLinksAtMostEveryInterval: dialLink tracks
// the connections dialed with the sentinel dialer (never a data node's), a
// READONLY refusal closes them, another refusal within askAgainEvery does
// not, and other refusals never do.
func TestReadOnlyDropsOnlySentinelLinksAtMostEveryInterval(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	opt := SentinelClientOption([]string{l.Addr().String()}, "m", "")
	dial := func(d net.Dialer) net.Conn {
		t.Helper()
		c, err := opt.DialCtxFn(context.Background(), l.Addr().String(), &d, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	open := func(c net.Conn) bool {
		_, err := c.Write([]byte("PING\r\n"))
		return err == nil
	}
	sentinelLinks.mu.Lock()
	sentinelLinks.asked = time.Time{}
	sentinelLinks.mu.Unlock()

	refusal, other := refusals(t)
	sentinel, node := dial(opt.Sentinel.Dialer), dial(opt.Dialer)
	followRefusal(errors.New("READONLY, but not from Redis"))
	followRefusal(other)
	if !open(sentinel) {
		t.Fatal("an error that is not READONLY closed the sentinel link")
	}
	followRefusal(refusal)
	if open(sentinel) {
		t.Fatal("READONLY left the sentinel link open")
	}
	if !open(node) {
		t.Fatal("READONLY closed a data node's connection")
	}
	again := dial(opt.Sentinel.Dialer)
	followRefusal(refusal)
	if !open(again) {
		t.Fatalf("a second READONLY within %v closed the sentinel link again", askAgainEvery)
	}
	sentinelLinks.mu.Lock()
	sentinelLinks.asked = time.Now().Add(-askAgainEvery)
	sentinelLinks.mu.Unlock()
	followRefusal(refusal)
	if open(again) {
		t.Fatalf("READONLY %v after the last drop left the sentinel link open", askAgainEvery)
	}
	sentinelLinks.mu.Lock()
	n := len(sentinelLinks.conns)
	sentinelLinks.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d closed links still tracked", n)
	}
}

// TestReadOnlyIsRetriedBriefly: retryReadOnly sends a call again while it
// meets READONLY (it did not run), for at most readOnlyRetryFor; any other
// failure is answered at once.
func TestReadOnlyIsRetriedBriefly(t *testing.T) {
	readOnly, other := refusals(t)
	ctx := context.Background()
	calls := 0
	// answers is a call answering errs in turn, then without error, sent
	// once already (the first of errs).
	answers := func(errs ...error) (context.Context, func() (rueidis.RedisMessage, error), rueidis.RedisMessage, error) {
		calls = 1
		return ctx, func() (rueidis.RedisMessage, error) {
			calls++
			if calls <= len(errs) {
				return rueidis.RedisMessage{}, errs[calls-1]
			}
			return rueidis.RedisMessage{}, nil
		}, rueidis.RedisMessage{}, errs[0]
	}
	if _, err := retryReadOnly(answers(readOnly, readOnly)); err != nil || calls != 3 {
		t.Fatalf("READONLY twice, then an answer: %v after %d calls, want the answer after 3", err, calls)
	}
	if _, err := retryReadOnly(answers(other)); err != other || calls != 1 {
		t.Fatalf("another refusal: %v after %d calls, want it after 1", err, calls)
	}
	start := time.Now()
	always := make([]error, 1000)
	for i := range always {
		always[i] = readOnly
	}
	_, err := retryReadOnly(answers(always...))
	if took := time.Since(start); err != readOnly || took > readOnlyRetryFor+100*time.Millisecond || calls < 2 {
		t.Fatalf("READONLY throughout: %v after %d calls and %v, want READONLY within %v", err, calls, took, readOnlyRetryFor)
	}
}

// refusals are real refusals of a replica: READONLY for a write, and
// another for an unknown command.
func refusals(t *testing.T) (readOnly, other error) {
	t.Helper()
	srv := redistest.Require(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	// A replica of a primary that is not there: it refuses writes all the same.
	if err := c.Do(ctx, c.B().Arbitrary("REPLICAOF", "127.0.0.1", "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	readOnly = c.Do(ctx, c.B().Set().Key("k").Value("v").Build()).Error()
	if e, ok := rueidis.IsRedisErr(readOnly); !ok || !strings.HasPrefix(e.Error(), "READONLY") {
		t.Fatalf("a write to a replica answered %v, not READONLY", readOnly)
	}
	other = c.Do(ctx, c.B().Arbitrary("NOSUCHCOMMAND").Build()).Error()
	if _, ok := rueidis.IsRedisErr(other); !ok {
		t.Fatalf("an unknown command answered %v, not a refusal", other)
	}
	return readOnly, other
}
