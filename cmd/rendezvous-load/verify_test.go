package main

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	pion "github.com/pion/stun/v3"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/stunoracle"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// signedAnswer builds an answer with pion and signs it with crypto/hmac
// (independently of the code under test); key nil leaves it unsigned.
func signedAnswer(t *testing.T, tx [12]byte, key []byte, setters ...pion.Setter) []byte {
	t.Helper()
	return stunoracle.Build(t, key, append([]pion.Setter{pion.NewTransactionIDSetter(tx)}, setters...)...).Raw
}

// With Verify set, the client records answers by their signature, and a
// datagram that is not well-formed STUN is dropped without matching.
func TestUDPClientVerifiesAnswers(t *testing.T) {
	var rs RecSwitch
	rs.Store(new(Recorder))
	var last Code
	c := silentClient(t, 64, &rs, func(ref int32, code Code, m *stun.Message) { last = code }, nil)
	c.Verify = true
	r := testRequest()
	var wrong engine.Capability
	m := new(stun.Message)
	f := func(key []byte, want Code, setters ...pion.Setter) {
		t.Helper()
		if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		c.handle(signedAnswer(t, r.TxID, key, setters...), m, time.Now())
		if last != want || c.InFlight() != 0 {
			t.Fatalf("recorded %s with %d pending, want %s and 0", last, c.InFlight(), want)
		}
	}
	f(r.Key[:], CodeOK, pion.BindingSuccess)
	f(wrong[:], CodeBadSignature, pion.BindingSuccess)
	f(nil, CodeBadSignature, pion.BindingSuccess)
	f(r.Key[:], CodeStun508, pion.BindingError, pion.ErrorCodeAttribute{Code: 508})
	f(nil, CodeBadSignature, pion.BindingError, pion.ErrorCodeAttribute{Code: 404})
	f(nil, CodeUnauthorized, pion.BindingError, pion.ErrorCodeAttribute{Code: 401}) // 401 is unsigned by contract

	// A tampered answer does not verify.
	if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	good := signedAnswer(t, r.TxID, r.Key[:], pion.BindingSuccess, &pion.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 7})
	bad := append([]byte(nil), good...)
	bad[30] ^= 1 // inside XOR-MAPPED-ADDRESS
	fixFingerprint(bad)
	c.handle(bad, m, time.Now())
	if last != CodeBadSignature {
		t.Fatalf("tampered answer recorded %s", last)
	}

	// Malformed datagrams change nothing: no answer recorded, the pending
	// request stays pending, and they are counted.
	if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	var before Counts
	rs.Load().Load(&before)
	last = numCodes
	ok := signedAnswer(t, r.TxID, r.Key[:], pion.BindingSuccess)
	junk := [][]byte{nil, ok[:19], ok[:len(ok)-4], append([]byte{0x80}, ok[1:]...)}
	flip := append([]byte(nil), ok...)
	flip[len(flip)-1] ^= 1 // FINGERPRINT mismatch
	junk = append(junk, flip)
	for _, d := range junk {
		c.handle(d, m, time.Now())
	}
	var after Counts
	rs.Load().Load(&after)
	if last != numCodes || c.InFlight() != 1 || after != before || c.Malformed != uint64(len(junk)) {
		t.Fatalf("malformed datagrams: recorded %s, %d pending, %d counted malformed", last, c.InFlight(), c.Malformed)
	}
	c.handle(ok, m, time.Now())
	if last != CodeOK || c.InFlight() != 0 {
		t.Fatalf("the real answer after the junk: %s, %d pending", last, c.InFlight())
	}

	// Verification on the receive path allocates nothing.
	raw := signedAnswer(t, [12]byte{}, r.Key[:], pion.BindingSuccess)
	n := testing.AllocsPerRun(500, func() {
		if err := c.Send(KindPresence, 1, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		copy(raw[8:20], r.TxID[:])
		// The transaction ID is covered by the integrity and the
		// FINGERPRINT; patching it would fail Parse, so re-add the
		// FINGERPRINT and check the HMAC mismatch path, which computes the
		// same HMAC as a match.
		fixFingerprint(raw)
		c.handle(raw, m, time.Now())
	})
	if n != 0 {
		t.Fatalf("verifying receive path allocates %v times per datagram", n)
	}
	if last != CodeBadSignature {
		t.Fatalf("re-addressed answer recorded %s", last)
	}
}

// fixFingerprint recomputes the FINGERPRINT (RFC 8489 §14.7) that ends raw,
// after a test changed bytes before it.
func fixFingerprint(raw []byte) {
	n := len(raw) - 8
	binary.BigEndian.PutUint32(raw[n+4:], crc32.ChecksumIEEE(raw[:n])^0x5354554e)
}
