package main

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"

	pion "github.com/pion/stun/v3"
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/stunoracle"
	"github.com/rendezvous/rendezvous/netio/stun"
)

func testRequest() *stunRequest {
	var key engine.Capability
	for i := range key {
		key[i] = byte(i * 7)
	}
	h, _ := engine.ParseUUID("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
	return &stunRequest{TxID: [12]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, Kind: stun.KindPresence,
		Handle: engine.Handle{UUID: h}, Key: &key, Sequence: 42}
}

// checkIntegrity verifies MESSAGE-INTEGRITY-SHA256 with the oracle of
// internal/stunoracle, independent of the codec.
func checkIntegrity(t *testing.T, raw []byte, key []byte) {
	t.Helper()
	if err := stunoracle.Verify(raw, key); err != nil {
		t.Fatal(err)
	}
}

// The requests the tester composes carry what docs/contracts/udp.md asks for, as
// pion and crypto/hmac read them.
func TestRequestEncodingInterop(t *testing.T) {
	f := func(kind byte, seq uint64, local netip.AddrPort) {
		t.Helper()
		r := testRequest()
		r.Kind, r.Sequence, r.Local = kind, seq, local
		raw := r.Encode(make([]byte, 0, udpMaxReq))
		m := &pion.Message{Raw: append([]byte(nil), raw...)}
		if err := m.Decode(); err != nil {
			t.Fatalf("pion cannot decode: %v", err)
		}
		if m.Type != pion.BindingRequest || m.TransactionID != r.TxID {
			t.Fatalf("type %v tx %x", m.Type, m.TransactionID)
		}
		if err := pion.Fingerprint.Check(m); err != nil {
			t.Fatalf("fingerprint: %v", err)
		}
		var u pion.Username
		if err := u.GetFrom(m); err != nil || u.String() != string(kind)+":0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0" {
			t.Fatalf("username %q, %v", u, err)
		}
		seqv, err := m.Get(pion.AttrType(stun.AttrSequence))
		if seq == 0 {
			if err == nil {
				t.Fatal("RDV-SEQUENCE present without a sequence")
			}
		} else if err != nil || binary.BigEndian.Uint64(seqv) != seq {
			t.Fatalf("sequence %x, %v", seqv, err)
		}
		v, err := m.Get(pion.AttrType(stun.AttrLocalAddress))
		if local.IsValid() {
			if err != nil {
				t.Fatalf("no RDV-LOCAL-ADDRESS: %v", err)
			}
			// Decode it as an XOR-MAPPED-ADDRESS with pion.
			m2 := &pion.Message{TransactionID: m.TransactionID}
			m2.Add(pion.AttrXORMappedAddress, v)
			var xa pion.XORMappedAddress
			if err := xa.GetFrom(m2); err != nil || !xa.IP.Equal(net.IP(local.Addr().AsSlice())) || xa.Port != int(local.Port()) {
				t.Fatalf("local address %v, %v; want %v", xa, err, local)
			}
		} else if err == nil {
			t.Fatal("RDV-LOCAL-ADDRESS present without a local address")
		}
		checkIntegrity(t, raw, r.Key[:])
		// The last attribute is FINGERPRINT.
		if binary.BigEndian.Uint16(raw[len(raw)-8:]) != stun.AttrFingerprint {
			t.Fatal("FINGERPRINT is not last")
		}
		if len(raw) > udpMaxReq {
			t.Fatalf("request of %d bytes exceeds udpMaxReq", len(raw))
		}
	}
	f(stun.KindPresence, 42, netip.AddrPort{})
	f(stun.KindPresence, 1<<40, netip.MustParseAddrPort("192.168.1.20:40000"))
	f(stun.KindAttemptClient, 0, netip.MustParseAddrPort("[fd00::1]:5000"))
	f(stun.KindAttemptHost, 0, netip.AddrPort{})
}

func TestPlainBinding(t *testing.T) {
	tx := [12]byte{9, 9, 9}
	m := &pion.Message{Raw: encodePlainBinding(make([]byte, 0, udpMaxReq), tx)}
	if err := m.Decode(); err != nil || m.Type != pion.BindingRequest || m.TransactionID != tx {
		t.Fatalf("decode: %v %v", err, m.Type)
	}
	if err := pion.Fingerprint.Check(m); err != nil {
		t.Fatal(err)
	}
	if len(m.Attributes) != 1 {
		t.Fatalf("plain Binding carries %d attributes, want FINGERPRINT only", len(m.Attributes))
	}
}

// pionBuild builds a datagram with pion, the independent encoder.
func pionBuild(t *testing.T, tx [12]byte, setters ...pion.Setter) []byte {
	t.Helper()
	m, err := pion.Build(append([]pion.Setter{pion.NewTransactionIDSetter(tx)}, setters...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m.Raw
}

// Answers are classified by type and ERROR-CODE; indications are not answers.
func TestAnswerCode(t *testing.T) {
	tx := [12]byte{7, 7, 7, 7, 1, 2, 3, 4}
	var m stun.Message
	f := func(raw []byte, answer bool, want Code) {
		t.Helper()
		if err := stun.Parse(raw, &m); err != nil {
			t.Fatalf("parse: %v", err)
		}
		if isAnswer(&m) != answer {
			t.Fatalf("isAnswer = %v for type %#x", !answer, m.Type())
		}
		if answer && answerCode(&m) != want {
			t.Fatalf("answerCode = %s, want %s", answerCode(&m), want)
		}
	}
	f(pionBuild(t, tx, pion.BindingSuccess, &pion.XORMappedAddress{IP: net.IPv4(127, 0, 0, 1), Port: 9}, pion.Fingerprint), true, CodeOK)
	f(pionBuild(t, tx, pion.BindingError, pion.ErrorCodeAttribute{Code: 508, Reason: []byte("Insufficient Capacity")}, pion.Fingerprint), true, CodeStun508)
	f(pionBuild(t, tx, pion.BindingError, pion.ErrorCodeAttribute{Code: 401}, pion.Fingerprint), true, CodeUnauthorized)
	f(pionBuild(t, tx, pion.BindingError, pion.ErrorCodeAttribute{Code: 404}), true, CodeNotFound)
	f(pionBuild(t, tx, pion.BindingError, pion.ErrorCodeAttribute{Code: 503}), true, CodeUnavailable)
	f(pionBuild(t, tx, pion.BindingError, pion.ErrorCodeAttribute{Code: 599}), true, CodeOtherStatus)
	// An error response without ERROR-CODE is not a success.
	f(pionBuild(t, tx, pion.BindingError, pion.Fingerprint), true, CodeOtherStatus)
	f(pionBuild(t, tx, pion.NewType(pion.Method(stun.MethodIntroduce), pion.ClassIndication), pion.Fingerprint), false, 0)
	f(pionBuild(t, tx, pion.NewType(pion.Method(stun.MethodOffer), pion.ClassIndication), pion.Fingerprint), false, 0)
	f(pionBuild(t, tx, pion.BindingRequest), false, 0)
}

// Composing and signing a request, and parsing and verifying an answer,
// allocate nothing.
func TestSTUNAllocs(t *testing.T) {
	r := testRequest()
	r.Local = netip.MustParseAddrPort("10.1.2.3:4000")
	buf := make([]byte, 0, udpMaxReq)
	m := new(stun.Message)
	var sink Code
	n := testing.AllocsPerRun(500, func() {
		r.Sequence++
		buf = r.Encode(buf[:0])
		if stun.Parse(buf, m) != nil || !m.CheckIntegrity(r.Key[:]) {
			t.Fatal("the tester's own request does not parse and verify")
		}
		sink += answerCode(m)
	})
	if n != 0 {
		t.Fatalf("encode+parse allocates %v times per datagram", n)
	}
	if cap(buf) != udpMaxReq {
		t.Fatalf("request outgrew udpMaxReq: cap %d", cap(buf))
	}
	_ = sink
}

func TestEncodeTooSmallBufferIsABug(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("encoding into a 40-byte buffer did not panic")
		}
	}()
	testRequest().Encode(make([]byte, 0, 40))
}
