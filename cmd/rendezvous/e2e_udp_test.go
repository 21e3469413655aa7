package main

import (
	"crypto/rand"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// udpPeer is one host or client socket on loopback talking to the mediator.
type udpPeer struct {
	t      testing.TB
	conn   *net.UDPConn
	server netip.AddrPort
}

func newPeer(t testing.TB, mediator string) *udpPeer {
	t.Helper()
	server, err := netip.ParseAddrPort(mediator)
	if err != nil {
		t.Fatalf("mediator address %q: %v", mediator, err)
	}
	network, local := "udp4", "127.0.0.1:0"
	if server.Addr().Is6() {
		network, local = "udp6", "[::1]:0"
	}
	laddr, err := net.ResolveUDPAddr(network, local)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenUDP(network, laddr)
	if err != nil {
		t.Fatalf("cannot open a UDP socket: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &udpPeer{t: t, conn: conn, server: server}
}

// addr is the socket's own address, as the mediator sees it.
func (u *udpPeer) addr() netip.AddrPort {
	return u.conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

// request sends a Binding request signed with key for kind:handle; seq 0
// omits RDV-SEQUENCE, an invalid local omits RDV-LOCAL-ADDRESS. It returns
// the transaction ID.
func (u *udpPeer) request(kind byte, h engine.Handle, key *engine.Capability, seq uint64, local netip.AddrPort) [12]byte {
	u.t.Helper()
	msg, tx, err := signedRequest(kind, h, key, seq, local)
	if err != nil {
		u.t.Fatalf("building a request: %v", err)
	}
	u.send(msg)
	return tx
}

// signedRequest builds a Binding request for kind:h signed with key, with a
// random transaction ID; seq 0 omits RDV-SEQUENCE, an invalid local omits
// RDV-LOCAL-ADDRESS.
func signedRequest(kind byte, h engine.Handle, key *engine.Capability, seq uint64, local netip.AddrPort) ([]byte, [12]byte, error) {
	var tx [12]byte
	if _, err := rand.Read(tx[:]); err != nil {
		return nil, tx, err
	}
	b := stun.NewBuilder(make([]byte, 0, stun.MaxDatagram), stun.BindingRequest, tx)
	name := stun.Username(kind, h)
	b.AddUsername(name[:])
	if seq != 0 {
		b.AddUint64(stun.AttrSequence, seq)
	}
	if local.IsValid() {
		b.AddXORAddress(stun.AttrLocalAddress, local)
	}
	b.AddIntegritySHA256(key[:])
	b.AddFingerprint()
	return b.Bytes(), tx, b.Err()
}

// plainBinding sends an unauthenticated Binding request with FINGERPRINT.
func (u *udpPeer) plainBinding() [12]byte {
	u.t.Helper()
	var tx [12]byte
	if _, err := rand.Read(tx[:]); err != nil {
		u.t.Fatal(err)
	}
	var buf [64]byte
	b := stun.NewBuilder(buf[:], stun.BindingRequest, tx)
	b.AddFingerprint()
	u.send(b.Bytes())
	return tx
}

func (u *udpPeer) send(msg []byte) {
	u.t.Helper()
	if _, err := u.conn.WriteToUDPAddrPort(msg, u.server); err != nil {
		u.t.Fatalf("cannot send to the mediator: %v", err)
	}
}

// read returns the next datagram from the mediator, parsed; every answer
// must carry a valid FINGERPRINT.
func (u *udpPeer) read() *stun.Message {
	u.t.Helper()
	buf := make([]byte, 2048)
	for i := 0; i < 16; i++ {
		if err := u.conn.SetReadDeadline(time.Now().Add(hangGuard)); err != nil {
			u.t.Fatal(err)
		}
		n, from, err := u.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			u.t.Fatalf("no datagram from the mediator: %v", err)
		}
		if from.Port() != u.server.Port() {
			continue // not from the mediator
		}
		m := new(stun.Message)
		if err := stun.Parse(buf[:n:n], m); err != nil {
			u.t.Fatalf("mediator sent a malformed datagram: %v", err)
		}
		if !m.HasFingerprint() {
			u.t.Fatalf("answer of type %#x has no FINGERPRINT", m.Type())
		}
		return m
	}
	u.t.Fatalf("no datagram from the mediator")
	return nil
}

// readSigned reads the next datagram and checks its type and its signature
// with key.
func (u *udpPeer) readSigned(typ uint16, key *engine.Capability) *stun.Message {
	u.t.Helper()
	m := u.read()
	if m.Type() != typ {
		code, reason, _ := m.ErrorCode()
		u.t.Fatalf("got message type %#x (error %d %s), want %#x", m.Type(), code, reason, typ)
	}
	if !m.CheckIntegrity(key[:]) {
		u.t.Fatalf("message type %#x: MESSAGE-INTEGRITY-SHA256 does not verify with the expected capability", typ)
	}
	return m
}

// expectResponse reads a signed Binding success for tx and checks that it
// names this socket's address.
func (u *udpPeer) expectResponse(tx [12]byte, key *engine.Capability) *stun.Message {
	u.t.Helper()
	m := u.readSigned(stun.BindingSuccess, key)
	u.checkTx(m, tx)
	if got, ok := m.XORAddress(stun.AttrXORMappedAddress); !ok || got != u.addr() {
		u.t.Fatalf("XOR-MAPPED-ADDRESS %v (present %v), want %v", got, ok, u.addr())
	}
	if _, ok := m.Uint32(stun.AttrLifetime); !ok {
		u.t.Fatalf("success response without RDV-LIFETIME")
	}
	return m
}

func (u *udpPeer) checkTx(m *stun.Message, tx [12]byte) {
	u.t.Helper()
	if m.TransactionID() != tx {
		u.t.Fatalf("answer for another transaction")
	}
}

// expectIntroduce checks an INTRODUCE for kind:h signed with key naming
// peer (public) and peerLocal.
func (u *udpPeer) expectIntroduce(m *stun.Message, kind byte, h engine.Handle, key *engine.Capability, peer, peerLocal netip.AddrPort) {
	u.t.Helper()
	if m.Type() != stun.IntroduceIndication {
		u.t.Fatalf("got message type %#x, want INTRODUCE", m.Type())
	}
	if !m.CheckIntegrity(key[:]) {
		u.t.Fatalf("INTRODUCE is not signed with the recipient's capability")
	}
	want := stun.Username(kind, h)
	if got, _ := m.Username(); string(got) != string(want[:]) {
		u.t.Fatalf("INTRODUCE USERNAME %q, want %q", got, want)
	}
	if got, ok := m.XORAddress(stun.AttrXORPeerAddress); !ok || got != peer {
		u.t.Fatalf("INTRODUCE XOR-PEER-ADDRESS %v (present %v), want %v", got, ok, peer)
	}
	if got, ok := m.XORAddress(stun.AttrPeerLocalAddress); !ok || got != peerLocal {
		u.t.Fatalf("INTRODUCE RDV-PEER-LOCAL-ADDRESS %v (present %v), want %v", got, ok, peerLocal)
	}
}

// mustToken decodes a 43-character capability from a JSON response.
func mustToken(t testing.TB, s string) engine.Capability {
	t.Helper()
	c, ok := engine.ParseToken(s)
	if !ok {
		t.Fatalf("a capability token is not 43 base64url characters")
	}
	return c
}

func mustHandle(t testing.TB, s string) engine.Handle {
	t.Helper()
	u, ok := engine.ParseUUID(s)
	if !ok {
		t.Fatalf("handle %q is not a UUID", s)
	}
	return engine.Handle{UUID: u}
}
