package main

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// TestE2ERelayIntroduceLeavesFromTheInstanceThePeerReached: two instances
// on one Redis, relay on. A host's presence and binds reach b; a client
// joins relay-only through a's HTTP and binds through a. The client's bind
// with its relayed address completes the relay introduction at a: the
// client's RELAY-INTRODUCE leaves from a, the host's from b (forwarded), the
// address the host's NAT mapping points at, each naming the other side's
// relayed address and signed with the recipient's capability.
func TestE2ERelayIntroduceLeavesFromTheInstanceThePeerReached(t *testing.T) {
	args := append(redisStoreArgs(t), "--metrics-addr", "127.0.0.1:0")
	a, b := startRelayProc(t, args...), startRelayProc(t, args...)
	aMed, bMed := netip.MustParseAddrPort(a.mediator), netip.MustParseAddrPort(b.mediator)

	h := presenceOn(t, b, b.publish("fwd-relay-1", "Relayed across instances"))
	j := a.relayJoin("fwd-relay-join-1", h.pub.ListingID, true)
	attempt := mustHandle(t, j.Handle)
	h.offered(attempt)
	hostCap := engine.HostAttemptCapability(&h.cap, attempt)
	clientCap := mustToken(t, j.Token)
	hostRelay := netip.MustParseAddrPort("127.0.0.2:50010")
	clientRelay := netip.MustParseAddrPort("127.0.0.2:50011")

	tx := h.peer.attemptRequest(stun.KindAttemptHost, attempt, &hostCap, withLocal(hostLAN), withRelayed(hostRelay))
	h.peer.expectResponse(tx, &hostCap)
	client := newPeer(t, a.mediator)
	tx = client.attemptRequest(stun.KindAttemptClient, attempt, &clientCap, withLocal(clientLAN), withRelayed(clientRelay))
	client.answerAndIntroduction(tx, aMed, "the client's bind reached a", func(m *stun.Message) {
		expectRelayIntroduce(t, m, stun.KindAttemptClient, attempt, &clientCap, hostRelay)
	})
	m, from := h.peer.readFrom()
	if from != bMed {
		t.Fatalf("the host's RELAY-INTRODUCE came from %v; its binds reached b (%v), the completing bind a (%v)", from, bMed, aMed)
	}
	expectRelayIntroduce(t, m, stun.KindAttemptHost, attempt, &hostCap, clientRelay)

	for _, c := range []struct {
		p      *proc
		series string
	}{
		{a, `rendezvous_udp_forwarded_total{direction="out"}`}, // the OFFER and the host's RELAY-INTRODUCE
		{b, `rendezvous_udp_forwarded_total{direction="in"}`},
	} {
		if n := scrapeURL(t, "http://"+metricsAddr(t, c.p)+"/metrics").samples[c.series]; n != 2 {
			t.Errorf("%s = %v, want 2", c.series, n)
		}
	}
}

// expectRelayIntroduce checks a RELAY-INTRODUCE to side kind of attempt h:
// its USERNAME, the other side's relayed address, its signature, and the
// transaction ID derived from the handle (so a re-send is the same datagram).
func expectRelayIntroduce(t *testing.T, m *stun.Message, kind byte, h engine.Handle, key *engine.Capability, peerRelayed netip.AddrPort) {
	t.Helper()
	if m.Type() != stun.RelayIntroduceIndication || !m.CheckIntegrity(key[:]) {
		t.Fatalf("type %#x (signed with the %c capability: %v), want a RELAY-INTRODUCE", m.Type(), kind, m.CheckIntegrity(key[:]))
	}
	want := stun.Username(kind, h)
	if got, _ := m.Username(); string(got) != string(want[:]) {
		t.Fatalf("RELAY-INTRODUCE USERNAME %q, want %q", got, want)
	}
	if got, ok := m.XORAddress(stun.AttrXORPeerAddress); !ok || got != peerRelayed {
		t.Fatalf("RELAY-INTRODUCE to %c names %v (present %v), want the other side's relayed %v", kind, got, ok, peerRelayed)
	}
	if m.Has(stun.AttrPeerLocalAddress) {
		t.Fatalf("RELAY-INTRODUCE to %c carries a LAN address", kind)
	}
	var tx [12]byte // the contract's derivation: handle bytes 4-15, first byte XOR kind XOR 0x80
	copy(tx[:], h.UUID[4:16])
	tx[0] ^= kind ^ 0x80
	if m.TransactionID() != tx {
		t.Fatalf("RELAY-INTRODUCE to %c has a transaction ID not derived from the handle", kind)
	}
}
