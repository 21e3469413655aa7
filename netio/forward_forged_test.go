package netio

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/engine/redisstore"
	"github.com/rendezvous/rendezvous/engine/redisstore/redistest"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestForgedForwardsSendNothing: payloads published on an instance's real
// Redis forwarding channel by anyone without the capability key (the old
// unsealed format, a wrong MAC, a MAC for another instance, a stale one, a
// truncated one) make it send nothing: not one datagram reaches the
// destination they name, each is counted as forged or stale. A push sealed
// by another instance of the deployment, fresh and addressed to it, is
// sent (the destination's socket works).
func TestForgedForwardsSendNothing(t *testing.T) {
	srv := redistest.Require(t)
	keys := engine.NewKeyring(testKey)
	store := func() *redisstore.Store {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		s, err := redisstore.New(context.Background(), redisstore.Config{Client: c, Name: "fwd-forged", Limits: engine.DefaultLimits(), Keyring: keys})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := store(), store()
	set := metrics.NewSet()
	m, err := NewMediator(Config{Addrs: []string{"127.0.0.1:0"}, Sockets: 1, Forwarder: a, Metrics: set,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, a, keys)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { _ = m.Close() })

	victim, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	dst := victim.LocalAddr().(*net.UDPAddr).AddrPort()
	intro := push{kind: stun.KindAttemptClient, handle: engine.Handle{UUID: engine.NewUUID()}, dst: dst,
		peer: engine.Binding{Public: netip.MustParseAddrPort("198.51.100.66:4000")}}
	body := intro.appendPayload(nil)
	fk, h := newForwardKey(keys), engine.NewHMAC()
	now := time.Now()
	self := a.InstanceID()
	sealed := fk.seal(h, append([]byte(nil), body...), self, now)
	wrongMAC := append([]byte(nil), sealed...)
	wrongMAC[len(wrongMAC)-1] ^= 1
	forged := map[string][]byte{
		"unsealed (version 1 layout)": append([]byte{1}, body[1:]...),
		"unsealed (current layout)":   body,
		"wrong MAC":                   wrongMAC,
		"MAC for another instance":    fk.seal(h, append([]byte(nil), body...), engine.NewUUID(), now),
		"stale":                       fk.seal(h, append([]byte(nil), body...), self, now.Add(-forwardTTL-2*forwardSkew)),
		"from the future":             fk.seal(h, append([]byte(nil), body...), self, now.Add(time.Minute)),
		"truncated":                   sealed[:len(sealed)-1],
		"MAC only":                    sealed[len(sealed)-forwardMAC:],
		"sealed under another key": newForwardKey(engine.NewKeyring([32]byte{9})).seal(h,
			append([]byte(nil), body...), self, now),
	}
	for name, p := range forged {
		delivered, err := b.Forward(context.Background(), self, p)
		if err != nil || !delivered {
			t.Fatalf("%s: publish: delivered %v, %v", name, delivered, err)
		}
	}
	if n := count(victim, 500*time.Millisecond); n != 0 {
		t.Fatalf("%d datagrams sent for forged payloads", n)
	}
	drops := func(reason string) uint64 {
		return set.GetOrCreateCounter(`rendezvous_udp_dropped_total{reason="` + reason + `"}`).Get()
	}
	if f, s := drops("forward_forged"), drops("forward_stale"); f != 7 || s != 2 {
		t.Fatalf("counted %d forged and %d stale, want 7 and 2", f, s)
	}

	// The control: sealed by another instance for this one, now.
	if delivered, err := b.Forward(context.Background(), self, fk.seal(h, append([]byte(nil), body...), self, time.Now())); err != nil || !delivered {
		t.Fatalf("publish: %v %v", delivered, err)
	}
	if n := count(victim, 2*time.Second); n != 1 {
		t.Fatalf("a genuine forwarded INTRODUCE sent %d datagrams, want 1", n)
	}
}

// count reads datagrams on c until d passes without one.
func count(c *net.UDPConn, d time.Duration) int {
	n := 0
	buf := make([]byte, 2048)
	for {
		_ = c.SetReadDeadline(time.Now().Add(d))
		if _, err := c.Read(buf); err != nil {
			return n
		}
		n++
	}
}
