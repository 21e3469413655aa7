package netio

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestRelayIntroduceToASideBoundElsewhereIsForwarded: when the client's
// bind with its relayed address completes the relay introduction of a
// relay-only attempt whose host bound through another instance, the
// client's RELAY-INTRODUCE leaves here and the host's is queued for that
// instance, carrying the client's relayed address only and no capability;
// built there from the shared keyring it is byte for byte the
// RELAY-INTRODUCE this instance re-sends to the host's own retransmission.
// Queuing it allocates nothing.
func TestRelayIntroduceToASideBoundElsewhereIsForwarded(t *testing.T) {
	pf, fwd, other := hostElsewhereFixture(t)
	v, pc := pf.listing()
	host := netip.MustParseAddrPort("203.0.113.10:40000")
	client := netip.MustParseAddrPort("198.51.100.20:50000")
	hostRelay := netip.MustParseAddrPort("192.0.2.7:50001")
	clientRelay := netip.MustParseAddrPort("192.0.2.7:50002")
	buf := make([]byte, 0, 256)
	if out := pf.feed(host, buildInto(buf, 'p', v.Presence, &pc, 1, [12]byte{1})); len(out) != 1 {
		t.Fatal("no presence answer")
	}
	hostBind := func(a engine.AttemptView, tx byte) []packet {
		k := engine.HostAttemptCapability(&pc, a.Handle)
		return pf.feed(host, buildRelayed(buf, 'h', a.Handle, &k, hostRelay, [12]byte{tx}))
	}
	clientBind := func(a engine.AttemptView) []packet {
		k := pf.keys.AttemptClient(a.Handle)
		return pf.feed(client, buildRelayed(buf, 'c', a.Handle, &k, clientRelay, [12]byte{3}))
	}

	a := pf.relayAttempt(v, true)
	if out := hostBind(a, 2); len(out) != 1 {
		t.Fatalf("host bind: %d answers, want 1", len(out))
	}
	out := clientBind(a)
	if len(out) != 2 || out[0].addr != client || out[1].addr != client {
		t.Fatalf("completing client bind: %d answers, want the response and the client's RELAY-INTRODUCE, both to the client", len(out))
	}
	var m stun.Message
	if err := stun.Parse(out[1].buf, &m); err != nil {
		t.Fatal(err)
	}
	ck := pf.keys.AttemptClient(a.Handle)
	wantRelayIntroduce(t, &m, 'c', a.Handle, ck[:], hostRelay)
	var o outgoing
	select {
	case o = <-fwd.out:
	default:
		t.Fatal("the host's RELAY-INTRODUCE was not queued for the host's instance")
	}
	want := push{kind: pushRelayHost, handle: a.Handle, presence: v.Presence, dst: host, peer: engine.Binding{Public: clientRelay}}
	if o.to != other || o.p != want {
		t.Fatalf("queued %+v for %v, want %+v for %v", o.p, o.to, want, other)
	}
	var back push
	if !back.parsePayload(string(o.p.appendPayload(nil))) || back != want {
		t.Fatalf("the payload reads back as %+v, want %+v", back, want)
	}
	resend := hostBind(a, 4)
	if len(resend) != 2 {
		t.Fatalf("host's retransmitted bind: %d answers, want the response and the RELAY-INTRODUCE", len(resend))
	}
	if got := encodePush(make([]byte, 0, writeSlot), pf.keys, &back); !bytes.Equal(got, resend[1].buf) {
		t.Fatalf("the forwarded RELAY-INTRODUCE differs from the one re-sent to the host:\n%x\n%x", got, resend[1].buf)
	}

	const runs = 100
	var ready [runs + 1]engine.AttemptView // AllocsPerRun runs once more than asked
	for i := range ready {
		ready[i] = pf.relayAttempt(v, true)
		if out := hostBind(ready[i], 6); len(out) != 1 {
			t.Fatal("host bind")
		}
	}
	n := 0
	allocs := testing.AllocsPerRun(runs, func() {
		n++
		if out := clientBind(ready[n-1]); len(out) != 2 {
			t.Fatalf("%d answers, want 2", len(out))
		}
		<-fwd.out
	})
	if allocs != 0 && !raceEnabled {
		t.Fatalf("a completing bind forwarding the host's RELAY-INTRODUCE: %v allocations, want 0", allocs)
	}
}
