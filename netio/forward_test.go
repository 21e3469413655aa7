package netio

import (
	"bytes"
	"context"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// hostElsewhere is the fixture's store as one instance of a deployment
// sees it when every host bound through instance other: attempt views name
// other as the host's bind instance.
type hostElsewhere struct {
	engine.Store
	other engine.UUID
}

func (s hostElsewhere) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	err := s.Store.ApplyBatch(ctx, ops)
	for i := range ops {
		if ops[i].Kind == engine.OpBindAttempt && ops[i].Attempt.Host.Bound() {
			ops[i].Attempt.HostInstance = s.other
		}
	}
	return err
}

// hostElsewhereFixture is a processor whose store says every host bound
// through instance other, and whose forwarder queues one push.
func hostElsewhereFixture(t *testing.T) (*procFixture, *forwarder, engine.UUID) {
	pf := newProcFixture(t)
	other := engine.NewUUID()
	pf.proc.store = hostElsewhere{Store: pf.store, other: other}
	fwd := &forwarder{self: pf.store.InstanceID(), out: make(chan outgoing, 1)}
	pf.proc.fwd = fwd
	return pf, fwd, other
}

// TestIntroduceToASideBoundElsewhereIsForwarded: when the client's bind
// completes an attempt whose host bound through another instance, the
// client's INTRODUCE leaves here and the host's is queued for that
// instance, without its capability; built there from the shared keyring it
// is byte for byte the INTRODUCE this instance re-sends to the host's own
// retransmission. Queuing it allocates nothing; with the queue full it is
// dropped and counted.
func TestIntroduceToASideBoundElsewhereIsForwarded(t *testing.T) {
	pf, fwd, other := hostElsewhereFixture(t)
	v, pc := pf.listing()
	host := netip.MustParseAddrPort("203.0.113.10:40000")
	client := netip.MustParseAddrPort("198.51.100.20:50000")
	buf := make([]byte, 0, 256)
	if out := pf.feed(host, buildInto(buf, 'p', v.Presence, &pc, 1, [12]byte{1})); len(out) != 1 {
		t.Fatal("no presence answer")
	}
	bindBoth := func(a engine.AttemptView) []packet {
		t.Helper()
		hc := engine.HostAttemptCapability(&pc, a.Handle)
		if out := pf.feed(host, buildInto(buf, 'h', a.Handle, &hc, 0, [12]byte{2})); len(out) != 1 {
			t.Fatal("host bind")
		}
		cc := pf.keys.AttemptClient(a.Handle)
		return pf.feed(client, buildInto(buf, 'c', a.Handle, &cc, 0, [12]byte{3}))
	}

	a := pf.attempt(v)
	out := bindBoth(a)
	if len(out) != 2 || out[0].addr != client || out[1].addr != client {
		t.Fatalf("completing client bind: %d answers, want the response and the client's INTRODUCE, both to the client", len(out))
	}
	var o outgoing
	select {
	case o = <-fwd.out:
	default:
		t.Fatal("the host's INTRODUCE was not queued for the host's instance")
	}
	want := push{kind: stun.KindAttemptHost, handle: a.Handle, presence: v.Presence, dst: host,
		peer: engine.Binding{Public: client}}
	if o.to != other || o.p != want {
		t.Fatalf("queued %+v for %v, want %+v for %v", o.p, o.to, want, other)
	}
	var back push
	if !back.parsePayload(string(o.p.appendPayload(nil))) || back != want {
		t.Fatalf("the payload reads back as %+v, want %+v", back, want)
	}
	hc := engine.HostAttemptCapability(&pc, a.Handle)
	resend := pf.feed(host, buildInto(buf, 'h', a.Handle, &hc, 0, [12]byte{4}))
	if len(resend) != 2 {
		t.Fatalf("host's retransmitted bind: %d answers, want the response and the INTRODUCE", len(resend))
	}
	if got := encodePush(make([]byte, 0, writeSlot), pf.keys, &back); !bytes.Equal(got, resend[1].buf) {
		t.Fatalf("the forwarded INTRODUCE differs from the one re-sent to the host:\n%x\n%x", got, resend[1].buf)
	}

	// Zero allocations with the push queued, and a drop when it is full.
	const runs = 201
	var ready [runs + 1]engine.AttemptView // AllocsPerRun runs once more than asked; one for the drop
	for i := range ready {
		ready[i] = pf.attempt(v)
		k := engine.HostAttemptCapability(&pc, ready[i].Handle)
		if out := pf.feed(host, buildInto(buf, 'h', ready[i].Handle, &k, 0, [12]byte{6})); len(out) != 1 {
			t.Fatal("host bind")
		}
	}
	n := 0
	completing := func() []packet {
		k := pf.keys.AttemptClient(ready[n].Handle)
		n++
		return pf.feed(client, buildInto(buf, 'c', ready[n-1].Handle, &k, 0, [12]byte{8}))
	}
	allocs := testing.AllocsPerRun(runs-1, func() {
		if out := completing(); len(out) != 2 {
			t.Fatalf("%d answers, want 2", len(out))
		}
		<-fwd.out
	})
	if allocs != 0 && !raceEnabled {
		t.Fatalf("a completing bind forwarding the host's INTRODUCE: %v allocations, want 0", allocs)
	}
	fwd.out <- outgoing{} // full
	n = runs
	if out := completing(); len(out) != 2 || pf.proc.stats.drops[dropForwardQueue] != 1 {
		t.Fatalf("with the queue full: %d answers, %d counted drops; want 2 and 1", len(out), pf.proc.stats.drops[dropForwardQueue])
	}
}

// TestPushPayloadRoundTripsAndRefusesWhatNoInstanceSends: every push
// reads back as written (IPv4 and IPv6, with and without a peer's local
// address, and RELAY-INTRODUCEs); a payload of another version, an unknown
// kind, a push without a destination, an INTRODUCE without a peer, a
// RELAY-INTRODUCE without a relayed address or with a LAN one, a zoned
// address, or any truncation or extension of a valid one is refused.
func TestPushPayloadRoundTripsAndRefusesWhatNoInstanceSends(t *testing.T) {
	h, pres := engine.Handle{UUID: engine.NewUUID()}, engine.Handle{UUID: engine.NewUUID()}
	v4, v6 := netip.MustParseAddrPort("203.0.113.10:40000"), netip.MustParseAddrPort("[2001:db8::7]:3000")
	lan := netip.MustParseAddrPort("192.168.1.10:5000")
	good := []push{
		{kind: pushOffer, handle: h, presence: pres, lifetime: 29, dst: v4},
		{kind: pushOffer, handle: h, presence: pres, lifetime: 1, dst: v6},
		{kind: stun.KindAttemptHost, handle: h, presence: pres, dst: v4, peer: engine.Binding{Public: v6, Local: lan}},
		{kind: stun.KindAttemptClient, handle: h, presence: pres, dst: v6, peer: engine.Binding{Public: v4}},
		{kind: pushRelayHost, handle: h, presence: pres, dst: v4, peer: engine.Binding{Public: v6}},
		{kind: pushRelayClient, handle: h, presence: pres, dst: v6, peer: engine.Binding{Public: v4}},
	}
	for _, p := range good {
		b := p.appendPayload(nil)
		if len(b) > pushPayloadMax {
			t.Fatalf("%+v: payload of %d bytes, over pushPayloadMax %d", p, len(b), pushPayloadMax)
		}
		var back push
		if !back.parsePayload(string(b)) || back != p {
			t.Fatalf("%+v reads back as %+v", p, back)
		}
		for n := range len(b) {
			if back.parsePayload(string(b[:n])) {
				t.Fatalf("%+v truncated to %d bytes is accepted", p, n)
			}
		}
		if back.parsePayload(string(append(b, 0))) {
			t.Fatalf("%+v with a trailing byte is accepted", p)
		}
	}
	zoned := netip.MustParseAddrPort("[fe80::1%eth0]:3000")
	for name, p := range map[string]push{
		"unknown kind":             {kind: 'x', handle: h, dst: v4},
		"presence kind":            {kind: stun.KindPresence, handle: h, dst: v4},
		"offer without a dst":      {kind: pushOffer, handle: h},
		"introduce without peer":   {kind: stun.KindAttemptClient, handle: h, dst: v4},
		"zoned destination":        {kind: pushOffer, handle: h, dst: zoned},
		"zoned peer local":         {kind: stun.KindAttemptHost, handle: h, dst: v4, peer: engine.Binding{Public: v6, Local: zoned}},
		"introduce without a dst":  {kind: stun.KindAttemptHost, handle: h, peer: engine.Binding{Public: v6}},
		"relay without a relayed":  {kind: pushRelayClient, handle: h, dst: v4},
		"relay with a LAN address": {kind: pushRelayHost, handle: h, dst: v4, peer: engine.Binding{Public: v6, Local: lan}},
		"relay without a dst":      {kind: pushRelayHost, handle: h, peer: engine.Binding{Public: v6}},
	} {
		var back push
		if back.parsePayload(string(p.appendPayload(nil))) {
			t.Fatalf("%s: accepted", name)
		}
	}
	b := good[0].appendPayload(nil)
	b[0] = pushVersion + 1
	var back push
	if back.parsePayload(string(b)) {
		t.Fatal("another version is accepted")
	}
}
