package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	"github.com/pion/stun/v3"
)

func testRequest() *stunRequest {
	var key Capability
	for i := range key {
		key[i] = byte(i * 7)
	}
	h, _ := parseUUID("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
	return &stunRequest{TxID: [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Kind: 'p', Handle: h, Key: &key, Sequence: 42}
}

// checkIntegrity verifies MESSAGE-INTEGRITY-SHA256 per RFC 8489 §14.6 with
// crypto/hmac over pion's raw bytes, independent of the encoder.
func checkIntegrity(t *testing.T, raw []byte, key []byte) {
	t.Helper()
	off := stunHeaderLen
	for off+4 <= len(raw) {
		typ := binary.BigEndian.Uint16(raw[off:])
		l := int(binary.BigEndian.Uint16(raw[off+2:]))
		if typ == attrIntegrity {
			msg := append([]byte(nil), raw[:off]...)
			binary.BigEndian.PutUint16(msg[2:4], uint16(off-stunHeaderLen+4+32))
			m := hmac.New(sha256.New, key)
			m.Write(msg)
			if !hmac.Equal(m.Sum(nil), raw[off+4:off+4+l]) {
				t.Fatal("MESSAGE-INTEGRITY-SHA256 does not verify")
			}
			return
		}
		off += 4 + (l+3)&^3
	}
	t.Fatal("no MESSAGE-INTEGRITY-SHA256")
}

func TestRequestEncodingInterop(t *testing.T) {
	f := func(kind byte, seq uint64, local netip.AddrPort) {
		t.Helper()
		r := testRequest()
		r.Kind, r.Sequence, r.Local = kind, seq, local
		raw := r.AppendRequest(nil)
		m := &stun.Message{Raw: append([]byte(nil), raw...)}
		if err := m.Decode(); err != nil {
			t.Fatalf("pion cannot decode: %v", err)
		}
		if m.Type != stun.BindingRequest || m.TransactionID != r.TxID {
			t.Fatalf("type %v tx %x", m.Type, m.TransactionID)
		}
		if err := stun.Fingerprint.Check(m); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		var u stun.Username
		if err := u.GetFrom(m); err != nil || u.String() != string(kind)+":0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0" {
			t.Fatalf("username %q, %v", u, err)
		}
		seqv, err := m.Get(stun.AttrType(attrSequence))
		if seq == 0 {
			if err == nil {
				t.Fatal("RDV-SEQUENCE present without a sequence")
			}
		} else if err != nil || binary.BigEndian.Uint64(seqv) != seq {
			t.Fatalf("sequence %x, %v", seqv, err)
		}
		if local.IsValid() {
			v, err := m.Get(stun.AttrType(attrLocalAddr))
			if err != nil {
				t.Fatalf("no RDV-LOCAL-ADDRESS: %v", err)
			}
			// Decode it as an XOR-MAPPED-ADDRESS with pion.
			m2 := &stun.Message{TransactionID: m.TransactionID}
			m2.Add(stun.AttrXORMappedAddress, v)
			var xa stun.XORMappedAddress
			if err := xa.GetFrom(m2); err != nil || !xa.IP.Equal(net.IP(local.Addr().AsSlice())) || xa.Port != int(local.Port()) {
				t.Fatalf("local address %v, %v; want %v", xa, err, local)
			}
		}
		checkIntegrity(t, raw, r.Key[:])
		// The last attribute is FINGERPRINT.
		if binary.BigEndian.Uint16(raw[len(raw)-8:]) != attrFingerprint {
			t.Fatal("FINGERPRINT is not last")
		}
	}
	f('p', 42, netip.AddrPort{})
	f('p', 1<<40, netip.MustParseAddrPort("192.168.1.20:40000"))
	f('c', 0, netip.MustParseAddrPort("[fd00::1]:5000"))
	f('h', 0, netip.AddrPort{})
}

func TestPlainBinding(t *testing.T) {
	tx := [12]byte{9, 9, 9}
	m := &stun.Message{Raw: AppendPlainBinding(nil, &tx)}
	if err := m.Decode(); err != nil || m.Type != stun.BindingRequest {
		t.Fatalf("decode: %v %v", err, m.Type)
	}
	if err := stun.Fingerprint.Check(m); err != nil {
		t.Fatal(err)
	}
}

func TestParseAnswer(t *testing.T) {
	tx := [12]byte{7, 7, 7, 7, 1, 2, 3, 4}
	build := func(setters ...stun.Setter) []byte {
		t.Helper()
		m, err := stun.Build(append([]stun.Setter{stun.NewTransactionIDSetter(tx)}, setters...)...)
		if err != nil {
			t.Fatal(err)
		}
		return m.Raw
	}
	var a stunAnswer
	att := bytes.Repeat([]byte{0xab}, 16)
	ok := build(stun.BindingSuccess, &stun.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 9},
		stun.RawAttribute{Type: stun.AttrType(attrAttempt), Value: att}, stun.RawAttribute{Type: stun.AttrType(attrAttempt), Value: att}, stun.Fingerprint)
	if !parseAnswer(ok, &a) || a.Type != typeBindingOK || a.ErrCode != 0 || a.NAttempts != 2 || a.TxID != tx || a.Attempts[1][0] != 0xab {
		t.Fatalf("success answer parsed as %+v", a)
	}
	shed := build(stun.BindingError, stun.ErrorCodeAttribute{Code: 508, Reason: []byte("Insufficient Capacity")}, stun.Fingerprint)
	if !parseAnswer(shed, &a) || a.Type != typeBindingErr || a.ErrCode != 508 || stunCode(a.ErrCode) != CodeStun508 {
		t.Fatalf("508 answer parsed as %+v", a)
	}
	intro := build(stun.NewType(stun.Method(methodIntroduce), stun.ClassIndication), stun.NewUsername("c:x"),
		stun.RawAttribute{Type: stun.AttrType(attrXorPeer), Value: []byte{0, 1, 0, 5, 1, 2, 3, 4}}, stun.Fingerprint)
	if !parseAnswer(intro, &a) || a.Type != typeIntroduce || !a.HasPeer || string(a.Username) != "c:x" {
		t.Fatalf("introduce parsed as %+v (type %x want %x)", a, a.Type, typeIntroduce)
	}
	offer := build(stun.NewType(stun.Method(methodOffer), stun.ClassIndication), stun.Fingerprint)
	if !parseAnswer(offer, &a) || a.Type != typeOffer {
		t.Fatalf("offer type %x, want %x", a.Type, typeOffer)
	}
	// Malformed datagrams are rejected.
	bad := func(b []byte) {
		t.Helper()
		if parseAnswer(b, &a) {
			t.Fatalf("accepted malformed % x", b)
		}
	}
	bad(nil)
	bad(ok[:19])
	bad(ok[:len(ok)-4]) // length field no longer matches
	b := append([]byte(nil), ok...)
	b[0] |= 0x80
	bad(b)
	b = append([]byte(nil), ok...)
	b[4] ^= 1 // magic cookie
	bad(b)
	b = append([]byte(nil), ok...)
	binary.BigEndian.PutUint16(b[stunHeaderLen+2:], 0xfff0) // attribute overruns
	bad(b)
}

func TestSTUNAllocs(t *testing.T) {
	r := testRequest()
	r.Local = netip.MustParseAddrPort("10.1.2.3:4000")
	buf := make([]byte, 0, udpMaxReq)
	var a stunAnswer
	n := testing.AllocsPerRun(500, func() {
		r.Sequence++
		buf = r.AppendRequest(buf[:0])
		parseAnswer(buf, &a)
	})
	if n != 0 {
		t.Fatalf("encode+parse allocates %v times per datagram", n)
	}
	if cap(buf) != udpMaxReq {
		t.Fatalf("request outgrew udpMaxReq: cap %d", cap(buf))
	}
}

func TestWireValues(t *testing.T) {
	u, ok := parseUUID("0F1E2D3C-4B5A-4978-8695-A4B3C2D1E0F0")
	if !ok || u.String() != "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0" {
		t.Fatalf("parseUUID upper case: %v %s", ok, u)
	}
	for _, s := range []string{"", "0f1e2d3c4b5a49788695a4b3c2d1e0f0", "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0fg", "0f1e2d3c-4b5a-4978-8695_a4b3c2d1e0f0"} {
		if _, ok := parseUUID(s); ok {
			t.Fatalf("parseUUID accepted %q", s)
		}
	}
	c, ok := parseToken("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")
	if !ok || c[31] != 31 {
		t.Fatalf("parseToken: %v", ok)
	}
	if _, ok := parseToken("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh"); ok {
		t.Fatal("parseToken accepted 42 characters")
	}
	if s := c.String(); s != "[REDACTED]" {
		t.Fatalf("capability prints %q", s)
	}
	// hmacSHA256 equals crypto/hmac.
	m := hmac.New(sha256.New, c[:])
	m.Write([]byte("rdv-attempt-host"))
	m.Write(u[:])
	if hc := hostAttemptCap(&c, &u); !bytes.Equal(hc[:], m.Sum(nil)) {
		t.Fatal("hostAttemptCap differs from crypto/hmac")
	}
}
