package client

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

const relayTestSecret = "relay-test-secret"

// TestRelayAllocationExchange: two allocations on a real coturn, made with
// the server's kind of credentials, permit each other and exchange
// datagrams through the relay, both ways.
func TestRelayAllocationExchange(t *testing.T) {
	tc := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), relayTestSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	exp := time.Now().Add(time.Minute)
	a, err := allocateRelay(ctx, tc.relayFor(relayTestSecret, "attempt-a.h", exp))
	if err != nil {
		t.Fatalf("allocate a: %v", err)
	}
	defer a.close()
	b, err := allocateRelay(ctx, tc.relayFor(relayTestSecret, "attempt-a.c", exp))
	if err != nil {
		t.Fatalf("allocate b: %v", err)
	}
	defer b.close()
	if a.addr.Addr() != tc.addr.Addr() || a.addr == b.addr || a.addr.Port() == tc.addr.Port() {
		t.Fatalf("relayed addresses %v and %v: want two distinct ports on the relay %v", a.addr, b.addr, tc.addr.Addr())
	}
	// Each side's first datagram installs its permission for the other; a
	// datagram that arrives before the receiver's permission exists is
	// dropped by the relay, so each side sends until it hears the other.
	if err := a.permit(ctx, b.addr, []byte("a0")); err != nil {
		t.Fatalf("permit a→b: %v", err)
	}
	if err := b.permit(ctx, a.addr, []byte("b0")); err != nil {
		t.Fatalf("permit b→a: %v", err)
	}
	for _, d := range []struct {
		from, to *relayAllocation
		name     string
	}{{a, b, "a→b"}, {b, a, "b→a"}} {
		got := make(chan string, 1)
		go func() {
			buf := make([]byte, 64)
			for {
				n, from, err := d.to.relay.ReadFrom(buf)
				if err != nil {
					return
				}
				if addrPortOf(from) == d.from.addr && strings.HasPrefix(string(buf[:n]), "msg") {
					got <- string(buf[:n])
					return
				}
			}
		}()
		for i := 0; ; i++ {
			if _, err := d.from.WriteToUDPAddrPort([]byte(fmt.Sprintf("msg %d", i)), d.to.addr); err != nil {
				t.Fatalf("%s: send: %v", d.name, err)
			}
			select {
			case m := <-got:
				t.Logf("%s: %q arrived from the peer's relayed address", d.name, m)
			case <-time.After(100 * time.Millisecond):
				if ctx.Err() == nil {
					continue
				}
				t.Fatalf("%s: nothing arrived through the relay", d.name)
			}
			break
		}
	}
}

// TestRelayRefusedCredentials: a relay that refuses the credentials (made
// with another secret, or expired) fails the allocation with the typed
// ErrRelayRefused well within the timeout, and the error never carries the
// credential.
func TestRelayRefusedCredentials(t *testing.T) {
	tc := startCoturn(t, nil, netip.MustParseAddr("127.0.0.1"), freeUDPPort(t), relayTestSecret)
	for _, c := range []struct {
		name   string
		secret string
		expiry time.Time
	}{
		{"wrong secret", "not-the-secret", time.Now().Add(time.Minute)},
		{"expired", relayTestSecret, time.Now().Add(-time.Minute)},
	} {
		t.Run(c.name, func(t *testing.T) {
			const timeout = 3 * time.Second
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			r := tc.relayFor(c.secret, "attempt-x.c", c.expiry)
			a, err := allocateRelay(ctx, r)
			if err == nil {
				a.close()
				t.Fatalf("allocated with refused credentials")
			}
			var re *RelayError
			if !errors.Is(err, ErrRelayRefused) || !errors.As(err, &re) || re.Code != 401 {
				t.Fatalf("err = %v, want ErrRelayRefused with TURN code 401", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the refusal came only with the timeout: %v", err)
			}
			if strings.Contains(err.Error(), string(r.Credential)) || strings.Contains(fmt.Sprintf("%v %+v", r, r), string(r.Credential)) {
				t.Fatalf("the credential leaks into an error or a printed Relay")
			}
		})
	}
}

// TestRelayUnreachableTimesOut: a relay that never answers fails typed
// (ErrRelayUnavailable) when the caller's deadline passes, not later.
func TestRelayUnreachableTimesOut(t *testing.T) {
	silent := fmt.Sprintf("127.0.0.1:%d", freeUDPPort(t)) // nothing listens
	r := &Relay{URLs: []string{"turn:" + silent}, Username: "1:x.c", Credential: "c"}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := allocateRelay(ctx, r)
	if !errors.Is(err, ErrRelayUnavailable) {
		t.Fatalf("err = %v, want ErrRelayUnavailable", err)
	}
}

func TestTURNUDPServer(t *testing.T) {
	for in, want := range map[string]string{
		"turn:relay.example:3478?transport=udp": "relay.example:3478",
		"turn:10.0.0.1":                         "10.0.0.1:3478",
		"turn:[2001:db8::1]:5349":               "[2001:db8::1]:5349",
		"turn:relay.example?transport=tcp":      "",
		"turns:relay.example:5349":              "",
		"stun:relay.example":                    "",
		"turn:relay.example:0":                  "",
		"turn:":                                 "",
	} {
		got, ok := turnUDPServer(in)
		if got != want || ok != (want != "") {
			t.Errorf("turnUDPServer(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
