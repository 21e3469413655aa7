package redisstore

import (
	"context"
	"crypto/tls"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/rueidis"
)

// Following a promotion at once. The client asks the sentinels for the
// primary when it connects to one, when the +switch-master event of the one
// sentinel it subscribes to arrives, and every sentinelRefresh. After a
// planned failover (package planned) that is up to a second late: the
// sentinel it subscribes to is often the one that led the failover, which
// announces +switch-master only once every replica is reconfigured, about
// a second after the others. But a demoted primary says so at once: it
// refuses a write with READONLY. So a READONLY refusal makes the store drop
// the client's connections to the sentinels; the client then asks them
// again, within milliseconds (losing its sentinel connection is one of the
// times it asks), and follows the primary they name; the refused call is
// sent again once it has (retryReadOnly). The sentinels remain the only
// authority on which node is the primary: nothing is inferred from the
// refusal but that it is time to ask.

// askAgainEvery bounds how often READONLY refusals drop the sentinel
// connections: every call sent to a demoted primary meets one, and one
// question to the sentinels answers them all. Should the sentinels still
// name the demoted node (a manual REPLICAOF, or a promotion they have not
// agreed on yet), the next refusal after this asks again.
const askAgainEvery = 100 * time.Millisecond

// sentinelLinks are the open connections to sentinels of every client built
// from SentinelClientOption in this process. The dialer cannot tell which
// client (and so which store) a connection serves, so a store drops them
// all: for another client that only costs one more question to its
// sentinels.
var sentinelLinks = linkSet{conns: map[net.Conn]struct{}{}}

type linkSet struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	asked time.Time // when the connections were last dropped
}

// markSentinelLink is set as the sentinel dialer's ControlContext: the client
// dials the sentinels with SentinelOption.Dialer and the data nodes with
// ClientOption.Dialer, through the same DialCtxFn, and this is how that
// function tells the two apart. It changes nothing on the socket.
func markSentinelLink(context.Context, string, string, syscall.RawConn) error { return nil }

// dialLink is the DialCtxFn of SentinelClientOption: a plain dial that
// remembers the connections made to sentinels until they close.
func dialLink(ctx context.Context, dst string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
	var c net.Conn
	var err error
	if cfg != nil {
		c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", dst)
	} else {
		c, err = d.DialContext(ctx, "tcp", dst)
	}
	if err != nil || d.ControlContext == nil {
		return c, err
	}
	l := &trackedLink{Conn: c}
	sentinelLinks.mu.Lock()
	sentinelLinks.conns[l] = struct{}{}
	sentinelLinks.mu.Unlock()
	return l, nil
}

// trackedLink forgets itself when closed, by the client or by a drop.
type trackedLink struct {
	net.Conn
	once sync.Once
}

func (l *trackedLink) Close() error {
	l.once.Do(func() {
		sentinelLinks.mu.Lock()
		delete(sentinelLinks.conns, l)
		sentinelLinks.mu.Unlock()
	})
	return l.Conn.Close()
}

// askSentinelsAgain drops every sentinel connection, at most once per
// askAgainEvery, so the clients ask the sentinels for the primary at once.
func askSentinelsAgain() {
	now := time.Now()
	sentinelLinks.mu.Lock()
	if now.Sub(sentinelLinks.asked) < askAgainEvery {
		sentinelLinks.mu.Unlock()
		return
	}
	sentinelLinks.asked = now
	conns := make([]net.Conn, 0, len(sentinelLinks.conns))
	for c := range sentinelLinks.conns {
		conns = append(conns, c)
	}
	sentinelLinks.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// followRefusal asks the sentinels again when err is a demoted primary's
// READONLY, and reports whether it was.
func followRefusal(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	if !ok || !strings.HasPrefix(e.Error(), "READONLY") {
		return false
	}
	askSentinelsAgain()
	return true
}

// A call a demoted primary refused with READONLY did not run (Redis refuses
// a function that may write on a replica before running it), so it is sent
// again once the client follows the new primary: a write held by a planned
// failover's pause then succeeds when the pause ends instead of answering
// service_unavailable. The retries are short and jittered (every caller
// held by the pause is released at once), and bounded.
const (
	readOnlyBackoff  = 5 * time.Millisecond // plus up to as much again
	readOnlyRetryFor = 250 * time.Millisecond
)

// retryReadOnly sends a call that answered err again, with do, while it
// meets READONLY, for at most readOnlyRetryFor and within ctx. Only a
// client following the sentinels moves to another node: the store calls
// it for those alone.
func retryReadOnly(ctx context.Context, do func() (rueidis.RedisMessage, error), m rueidis.RedisMessage, err error) (rueidis.RedisMessage, error) {
	until := time.Now().Add(readOnlyRetryFor)
	for followRefusal(err) {
		wait := readOnlyBackoff + rand.N(readOnlyBackoff)
		if time.Now().Add(wait).After(until) {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return m, err
		case <-t.C:
		}
		m, err = do()
	}
	return m, err
}
