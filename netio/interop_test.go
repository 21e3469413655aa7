package netio

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	pion "github.com/pion/stun/v3"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/stunoracle"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// The interoperability tests talk to a running mediator with an independent
// STUN implementation (pion/stun, test-only): pion encodes every request and
// decodes every answer, checking FINGERPRINT; MESSAGE-INTEGRITY-SHA256, which
// pion only names, is computed and checked here per RFC 8489 §14.6 over
// pion's raw bytes, so the oracle never uses our codec.

func pionRequest(t *testing.T, key []byte, setters ...pion.Setter) []byte {
	t.Helper()
	return stunoracle.Build(t, key, append([]pion.Setter{pion.TransactionID, pion.BindingRequest}, setters...)...).Raw
}

// pionRead reads one datagram and decodes it with pion, checking FINGERPRINT
// and (with key) MESSAGE-INTEGRITY-SHA256.
func pionRead(t *testing.T, c *net.UDPConn, key []byte) *pion.Message {
	t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(waitBound))
	n, _, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		t.Fatalf("no answer within the test bound: %v", err)
	}
	m := &pion.Message{Raw: buf[:n]}
	if err := m.Decode(); err != nil {
		t.Fatalf("pion cannot decode our answer: %v", err)
	}
	if err := pion.Fingerprint.Check(m); err != nil {
		t.Fatalf("pion FINGERPRINT check: %v", err)
	}
	if key == nil {
		if m.Contains(pion.AttrMessageIntegritySHA256) {
			t.Fatal("unexpected MESSAGE-INTEGRITY-SHA256")
		}
		return m
	}
	if err := stunoracle.Verify(m.Raw, key); err != nil {
		t.Fatalf("our answer: %v", err)
	}
	return m
}

func pionXOR(t *testing.T, m *pion.Message, at uint16) netip.AddrPort {
	t.Helper()
	var x pion.XORMappedAddress
	if err := x.GetFromAs(m, pion.AttrType(at)); err != nil {
		t.Fatalf("XOR address %#x: %v", at, err)
	}
	a, _ := netip.AddrFromSlice(x.IP)
	return netip.AddrPortFrom(a.Unmap(), uint16(x.Port))
}

func pionCode(t *testing.T, m *pion.Message, want int) {
	t.Helper()
	var ec pion.ErrorCodeAttribute
	if err := ec.GetFrom(m); err != nil || int(ec.Code) != want || m.Type != pion.BindingError {
		t.Fatalf("pion: error %v (%v), want %d", ec.Code, err, want)
	}
}

func TestInteropPion(t *testing.T) {
	f := newFixture(t, Config{})
	v, pc := f.listing()
	host, client := f.peer(), f.peer()
	send := func(p *peer, b []byte) { p.send(b) }

	// Plain Binding, as any STUN client sends it.
	send(host, pionRequest(t, nil))
	m := pionRead(t, host.conn, nil)
	if m.Type != pion.BindingSuccess || pionXOR(t, m, stun.AttrXORMappedAddress) != host.addr() {
		t.Fatal("plain Binding")
	}
	u := stun.Username(stun.KindPresence, v.Presence)
	sq := func(n uint64) pion.Setter {
		b := make([]byte, 8)
		binary.BigEndian.PutUint64(b, n)
		return pion.RawAttribute{Type: pion.AttrType(stun.AttrSequence), Value: b}
	}
	// Presence refresh, signed success.
	send(host, pionRequest(t, pc[:], pion.NewUsername(string(u[:])), sq(1)))
	m = pionRead(t, host.conn, pc[:])
	if m.Type != pion.BindingSuccess || pionXOR(t, m, stun.AttrXORMappedAddress) != host.addr() {
		t.Fatal("presence success")
	}
	if lt, err := m.Get(pion.AttrType(stun.AttrLifetime)); err != nil || binary.BigEndian.Uint32(lt) != 20 {
		t.Fatal("RDV-LIFETIME")
	}
	if m.Contains(pion.AttrUsername) {
		t.Fatal("response echoes USERNAME")
	}
	// Errors: 409 and 400 signed, 401 unsigned, 420 with UNKNOWN-ATTRIBUTES.
	send(host, pionRequest(t, pc[:], pion.NewUsername(string(u[:])), sq(1)))
	pionCode(t, pionRead(t, host.conn, pc[:]), 409)
	send(host, pionRequest(t, pc[:], pion.NewUsername(string(u[:]))))
	pionCode(t, pionRead(t, host.conn, pc[:]), 400)
	send(host, pionRequest(t, make([]byte, 32), pion.NewUsername(string(u[:])), sq(2)))
	pionCode(t, pionRead(t, host.conn, nil), 401)
	send(host, pionRequest(t, pc[:], pion.NewUsername(string(u[:])), sq(2),
		pion.RawAttribute{Type: 0x0031, Value: []byte{0}}))
	m = pionRead(t, host.conn, pc[:])
	pionCode(t, m, 420)
	var ua pion.UnknownAttributes
	if err := ua.GetFrom(m); err != nil || len(ua) != 1 || ua[0] != 0x0031 {
		t.Fatalf("UNKNOWN-ATTRIBUTES %v %v", ua, err)
	}
	send(host, pionRequest(t, nil, pion.RawAttribute{Type: 0x0031, Value: []byte{0}}))
	pionCode(t, pionRead(t, host.conn, nil), 420)

	// OFFER, then binds and INTRODUCE.
	a := f.attempt(v)
	f.med.Offer(a)
	m = pionRead(t, host.conn, pc[:])
	var name pion.Username
	if m.Type.Method != pion.Method(stun.MethodOffer) || m.Type.Class != pion.ClassIndication ||
		name.GetFrom(m) != nil || string(name) != string(u[:]) {
		t.Fatal("OFFER")
	}
	hc, cc := hostCap(v.Presence, a.Handle), clientCap(a.Handle)
	hu, cu := stun.Username(stun.KindAttemptHost, a.Handle), stun.Username(stun.KindAttemptClient, a.Handle)
	send(host, pionRequest(t, hc[:], pion.NewUsername(string(hu[:]))))
	if m = pionRead(t, host.conn, hc[:]); m.Type != pion.BindingSuccess {
		t.Fatal("host bind")
	}
	lan := &pion.XORMappedAddress{IP: net.ParseIP("192.168.1.9"), Port: 4000}
	send(client, pionRequest(t, cc[:], pion.NewUsername(string(cu[:])),
		setterFunc(func(m *pion.Message) error { return lan.AddToAs(m, pion.AttrType(stun.AttrLocalAddress)) })))
	if m = pionRead(t, client.conn, cc[:]); m.Type != pion.BindingSuccess {
		t.Fatal("client bind")
	}
	m = pionRead(t, client.conn, cc[:])
	if m.Type.Method != pion.Method(stun.MethodIntroduce) || pionXOR(t, m, stun.AttrXORPeerAddress) != host.addr() {
		t.Fatal("client INTRODUCE")
	}
	m = pionRead(t, host.conn, hc[:])
	if m.Type.Method != pion.Method(stun.MethodIntroduce) || pionXOR(t, m, stun.AttrXORPeerAddress) != client.addr() ||
		pionXOR(t, m, stun.AttrPeerLocalAddress) != netip.MustParseAddrPort("192.168.1.9:4000") {
		t.Fatal("host INTRODUCE")
	}
	_ = engine.Handle{}
}

type setterFunc func(*pion.Message) error

func (f setterFunc) AddTo(m *pion.Message) error { return f(m) }
