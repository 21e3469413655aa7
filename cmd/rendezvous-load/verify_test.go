package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/pion/stun/v3"
)

// signedAnswer builds an answer with pion and signs it with crypto/hmac
// (independently of the code under test); key nil leaves it unsigned.
func signedAnswer(t *testing.T, tx [12]byte, key []byte, setters ...stun.Setter) []byte {
	t.Helper()
	m, err := stun.Build(append([]stun.Setter{stun.NewTransactionIDSetter(tx)}, setters...)...)
	if err != nil {
		t.Fatal(err)
	}
	if key != nil {
		raw := append([]byte(nil), m.Raw...)
		binary.BigEndian.PutUint16(raw[2:4], uint16(len(raw)-20+36))
		mac := hmac.New(sha256.New, key)
		mac.Write(raw)
		m.Add(stun.AttrType(attrIntegrity), mac.Sum(nil))
	}
	if err := stun.Fingerprint.AddTo(m); err != nil {
		t.Fatal(err)
	}
	return m.Raw
}

func TestVerifyIntegrity(t *testing.T) {
	key := testRequest().Key
	var a stunAnswer
	tx := [12]byte{1}
	good := signedAnswer(t, tx, key[:], stun.BindingSuccess, &stun.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 7})
	if !parseAnswer(good, &a) || a.IntegrityOff < 0 || !verifyIntegrity(good, a.IntegrityOff, key) {
		t.Fatal("a correctly signed answer does not verify")
	}
	before := append([]byte(nil), good...)
	var other Capability
	if verifyIntegrity(good, a.IntegrityOff, &other) {
		t.Fatal("verified with the wrong key")
	}
	if string(before) != string(good) {
		t.Fatal("verifyIntegrity changed the datagram")
	}
	bad := append([]byte(nil), good...)
	bad[30] ^= 1 // inside XOR-MAPPED-ADDRESS
	if !parseAnswer(bad, &a) || verifyIntegrity(bad, a.IntegrityOff, key) {
		t.Fatal("a tampered answer verifies")
	}
	unsigned := signedAnswer(t, tx, nil, stun.BindingSuccess)
	if !parseAnswer(unsigned, &a) || a.IntegrityOff != -1 || verifyIntegrity(unsigned, a.IntegrityOff, key) {
		t.Fatal("an unsigned answer verifies")
	}
}

// With Verify set, the client records answers by their signature.
func TestUDPClientVerifiesAnswers(t *testing.T) {
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var rs RecSwitch
	rs.Store(new(Recorder))
	var last Code
	c, err := NewUDPClient(silent.LocalAddr().String(), 64, time.Minute, &rs, func(ref int32, code Code, a *stunAnswer) { last = code }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Verify = true
	r := testRequest()
	var wrong Capability
	var a stunAnswer
	f := func(key []byte, want Code, setters ...stun.Setter) {
		t.Helper()
		if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		c.handle(signedAnswer(t, r.TxID, key, setters...), &a, time.Now())
		if last != want {
			t.Fatalf("recorded %s, want %s", last, want)
		}
	}
	f(r.Key[:], CodeOK, stun.BindingSuccess)
	f(wrong[:], CodeBadSignature, stun.BindingSuccess)
	f(nil, CodeBadSignature, stun.BindingSuccess)
	f(r.Key[:], CodeStun508, stun.BindingError, stun.ErrorCodeAttribute{Code: 508})
	f(nil, CodeBadSignature, stun.BindingError, stun.ErrorCodeAttribute{Code: 404})
	f(nil, CodeUnauthorized, stun.BindingError, stun.ErrorCodeAttribute{Code: 401}) // 401 is unsigned by contract
	// Verification on the receive path allocates nothing.
	raw := signedAnswer(t, [12]byte{}, r.Key[:], stun.BindingSuccess)
	n := testing.AllocsPerRun(500, func() {
		if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		copy(raw[8:20], r.TxID[:])
		// The transaction ID is covered by the integrity: re-sign in place
		// would allocate, so check the mismatch path, which computes the
		// same HMAC.
		c.handle(raw, &a, time.Now())
	})
	if n != 0 {
		t.Fatalf("verifying receive path allocates %v times per datagram", n)
	}
}
