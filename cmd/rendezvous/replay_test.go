package main

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// signedDatagram is signedRequest for a test that sends the very same
// datagram again, from anywhere.
func signedDatagram(t *testing.T, kind byte, h engine.Handle, key *engine.Capability, seq uint64, local netip.AddrPort) ([]byte, [12]byte) {
	t.Helper()
	msg, tx, err := signedRequest(kind, h, key, seq, local)
	if err != nil {
		t.Fatal(err)
	}
	return msg, tx
}

// quiet proves u was sent nothing since its last read: the answer to a
// plain Binding sent now is the next datagram it gets.
func quiet(t *testing.T, u *udpPeer, who string) {
	t.Helper()
	tx := u.plainBinding()
	if m := u.read(); m.Type() != stun.BindingSuccess || m.TransactionID() != tx {
		t.Fatalf("%s got a datagram of type %#x where none was due", who, m.Type())
	}
}

// TestE2EReplayedDatagrams: captured presence and bind datagrams replayed
// byte for byte, by the peer itself (a retransmission) or from another
// address (an attacker on the path), never move presence, never bind a
// second endpoint and never cause a second introduction; an identical
// retransmission gets the requester its INTRODUCE again, and only it.
func TestE2EReplayedDatagrams(t *testing.T) {
	eachStore(t, func(t *testing.T, storeArgs []string) {
		p := startProc(t, storeArgs...)
		h := publishHost(t, p, "replay-1", "Replay host") // sequence 1 accepted
		attacker := newPeer(t, p.mediator)

		// A refresh, accepted once; the same bytes again are stale (409), from
		// the host or from elsewhere, and the attacker does not take presence.
		h.seq++
		refresh, tx := signedDatagram(t, stun.KindPresence, h.presence, &h.cap, h.seq, hostLAN)
		h.peer.send(refresh)
		h.peer.expectResponse(tx, &h.cap)
		h.peer.send(refresh)
		wantUDPError(t, h.peer, tx, &h.cap, 409)
		attacker.send(refresh)
		wantUDPError(t, attacker, tx, &h.cap, 409)
		j := p.join("replay-join-1", h.pub.ListingID)
		a := mustHandle(t, j.Handle)
		h.offered(a) // the OFFER still goes to the host: presence did not move
		quiet(t, attacker, "the attacker")

		// Both bind; the introduction is consumed by the client's bind.
		hostCap := engine.HostAttemptCapability(&h.cap, a)
		clientCap := mustToken(t, j.Token)
		client := newPeer(t, j.Mediator)
		hostBind, hostTx := signedDatagram(t, stun.KindAttemptHost, a, &hostCap, 0, hostLAN)
		clientBind, clientTx := signedDatagram(t, stun.KindAttemptClient, a, &clientCap, 0, clientLAN)
		h.peer.send(hostBind)
		h.peer.expectResponse(hostTx, &hostCap)
		client.send(clientBind)
		for range 2 { // response and INTRODUCE, in either order
			if m := client.read(); m.Type() == stun.IntroduceIndication {
				client.expectIntroduce(m, stun.KindAttemptClient, a, &clientCap, h.peer.addr(), hostLAN)
			} else {
				client.checkTx(m, clientTx)
			}
		}
		h.peer.expectIntroduce(h.peer.read(), stun.KindAttemptHost, a, &hostCap, client.addr(), clientLAN)

		// Replayed from another address: 409, and nobody is introduced again.
		attacker.send(clientBind)
		wantUDPError(t, attacker, clientTx, &clientCap, 409)
		attacker.send(hostBind)
		wantUDPError(t, attacker, hostTx, &hostCap, 409)
		quiet(t, attacker, "the attacker")
		quiet(t, h.peer, "the host")
		quiet(t, client, "the client")

		// Retransmitted by the peer itself: success and its own INTRODUCE
		// again (same datagram), the other side hears nothing.
		client.send(clientBind)
		for range 2 {
			if m := client.read(); m.Type() == stun.IntroduceIndication {
				client.expectIntroduce(m, stun.KindAttemptClient, a, &clientCap, h.peer.addr(), hostLAN)
			} else {
				client.checkTx(m, clientTx)
			}
		}
		quiet(t, h.peer, "the host")

		// Nothing is in flight: the introduction was consumed exactly once.
		var st struct {
			Pools map[string]struct {
				Used int `json:"used"`
			} `json:"pools"`
		}
		p.freshStats(t, statsToken(p.tokens), &st) // /metrics next shows the same figures
		if st.Pools["attempts"].Used != 1 {
			t.Fatalf("stats: %d attempts, want the one", st.Pools["attempts"].Used)
		}
		m := p.call("GET", "/metrics", statsToken(p.tokens), nil)
		if !slices.Contains(strings.Split(string(m.body), "\n"), "rendezvous_attempts_in_flight 0") {
			t.Fatalf("the attempt is still in flight after its introduction")
		}
	})
}
