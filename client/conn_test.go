package client

import (
	"errors"
	"net"
	"testing"
)

// TestOpenConn: a given socket stays the caller's; without one a socket is
// opened on the listen address (default 0.0.0.0:0) and owned; an unusable
// address is a *ConfigError, for NewJoiner too.
func TestOpenConn(t *testing.T) {
	given, err := ListenUDP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer given.Close()
	c, own, err := openConn(given, "not an address")
	if err != nil || own || c != PacketConn(given) {
		t.Fatalf("given socket: %v own=%v err=%v", c, own, err)
	}

	f := func(addr string, wantIP net.IP) {
		t.Helper()
		c, own, err := openConn(nil, addr)
		if err != nil || !own {
			t.Fatalf("openConn(nil, %q): own=%v err=%v", addr, own, err)
		}
		defer c.Close()
		ua := c.LocalAddr().(*net.UDPAddr)
		// 0.0.0.0 is bound dual-stack where the host has IPv6: [::].
		same := ua.IP.Equal(wantIP) || wantIP.IsUnspecified() && ua.IP.IsUnspecified()
		if !same || ua.Port == 0 {
			t.Fatalf("openConn(nil, %q) bound %v, want %v on a chosen port", addr, ua, wantIP)
		}
	}
	f("127.0.0.1:0", net.IPv4(127, 0, 0, 1))
	f("", net.IPv4zero)

	var ce *ConfigError
	if c, own, err := openConn(nil, "not an address"); !errors.As(err, &ce) || c != nil || own {
		t.Fatalf("bad address: %v own=%v err=%v, want a *ConfigError", c, own, err)
	}
	api, err := NewAPI("http://127.0.0.1:1", "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if j, err := NewJoiner(JoinerConfig{API: api, ProtocolVersion: 7, ListenAddr: "not an address"}); !errors.As(err, &ce) || j != nil {
		t.Fatalf("NewJoiner with a bad listen address: %v, %v; want a *ConfigError", j, err)
	}
}
