package main

import (
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// readFrom returns the next datagram on u's socket, parsed, with the
// address it came from (any sender: the test checks which).
func (u *udpPeer) readFrom() (*stun.Message, netip.AddrPort) {
	u.t.Helper()
	buf := make([]byte, 2048)
	if err := u.conn.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
		u.t.Fatal(err)
	}
	n, from, err := u.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		u.t.Fatalf("no datagram: %v", err)
	}
	m := new(stun.Message)
	if err := stun.Parse(buf[:n:n], m); err != nil || !m.HasFingerprint() {
		u.t.Fatalf("a malformed datagram from %v (%v)", from, err)
	}
	return m, netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
}

// answerAndIntroduction reads the answer to the bind tx and the
// introduction its completion pushes, in either order, both from med (bind
// says which bind it was); check checks the introduction.
func (u *udpPeer) answerAndIntroduction(tx [12]byte, med netip.AddrPort, bind string, check func(m *stun.Message)) {
	u.t.Helper()
	for range 2 {
		m, from := u.readFrom()
		if from != med {
			u.t.Fatalf("%s, but type %#x came from %v", bind, m.Type(), from)
		}
		if m.Type() == stun.BindingSuccess {
			u.checkTx(m, tx)
			continue
		}
		check(m)
	}
}

// TestE2EPushesLeaveFromTheInstanceThePeerReached: two instances on one
// Redis. A host's presence reaches b; a client joins through a's HTTP: the
// OFFER reaches the host from b's mediator address, the one its NAT mapping
// points at, not from a, where the attempt was created. The client binds
// through b, then the host's bind through a completes the attempt: the
// host's INTRODUCE leaves from a (its request reached a) and the client's
// from b, where the client's bind arrived. Each instance counts what it
// forwarded and received. Once b is killed, the OFFER of a new join
// through a reaches no instance, and a counts it as unreceived.
func TestE2EPushesLeaveFromTheInstanceThePeerReached(t *testing.T) {
	args := append(redisStoreArgs(t), "--metrics-addr", "127.0.0.1:0")
	a, b := startProc(t, args...), startProc(t, args...)
	aMed, bMed := netip.MustParseAddrPort(a.mediator), netip.MustParseAddrPort(b.mediator)

	h := presenceOn(t, b, b.publish("fwd-1", "Forwarded host"))
	j := a.join("fwd-join-1", h.pub.ListingID)
	attempt := mustHandle(t, j.Handle)
	m, from := h.peer.readFrom()
	if from != bMed {
		t.Fatalf("the OFFER came from %v; the host's presence reached b (%v), a is %v", from, bMed, aMed)
	}
	if m.Type() != stun.OfferIndication || !m.CheckIntegrity(h.cap[:]) {
		t.Fatalf("b sent type %#x (signed with the presence capability: %v), want an OFFER", m.Type(), m.CheckIntegrity(h.cap[:]))
	}
	if got, ok := m.Attempt(); !ok || got != attempt {
		t.Fatalf("the OFFER names attempt %v, want %v", got, attempt)
	}

	clientCap := mustToken(t, j.Token)
	client := newPeer(t, b.mediator)
	tx := client.request(stun.KindAttemptClient, attempt, &clientCap, 0, clientLAN)
	client.expectResponse(tx, &clientCap)
	hostAtA := newPeer(t, a.mediator)
	hostCap := engine.HostAttemptCapability(&h.cap, attempt)
	tx = hostAtA.request(stun.KindAttemptHost, attempt, &hostCap, 0, hostLAN)
	hostAtA.answerAndIntroduction(tx, aMed, "the host's bind reached a", func(m *stun.Message) {
		hostAtA.expectIntroduce(m, stun.KindAttemptHost, attempt, &hostCap, client.addr(), clientLAN)
	})
	m, from = client.readFrom()
	if from != bMed {
		t.Fatalf("the client's INTRODUCE came from %v; its bind reached b (%v), the completing bind a (%v)", from, bMed, aMed)
	}
	client.expectIntroduce(m, stun.KindAttemptClient, attempt, &clientCap, hostAtA.addr(), hostLAN)

	for _, c := range []struct {
		p      *proc
		series string
	}{
		{a, `rendezvous_udp_forwarded_total{direction="out"}`}, // the OFFER and the client's INTRODUCE
		{b, `rendezvous_udp_forwarded_total{direction="in"}`},
	} {
		if n := scrapeURL(t, "http://"+metricsAddr(t, c.p)+"/metrics").samples[c.series]; n != 2 {
			t.Errorf("%s = %v, want 2", c.series, n)
		}
	}

	b.signal(syscall.SIGKILL)
	b.wait()
	a.join("fwd-join-2", h.pub.ListingID) // the host's presence, recorded at b, is still fresh
	const unreceived = `rendezvous_udp_dropped_total{reason="forward_unreceived"}`
	for i := 0; ; i++ {
		n := scrapeURL(t, "http://"+metricsAddr(t, a)+"/metrics").samples[unreceived]
		if n == 1 {
			break
		}
		if n > 1 || i == 200 {
			t.Fatalf("%s = %v after one OFFER to the killed instance, want 1", unreceived, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
