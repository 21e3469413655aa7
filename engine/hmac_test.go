package engine_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

func TestHMACMatchesCryptoHMAC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, engine.MaxHMACMessage+64)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	h := engine.NewHMAC()
	var k engine.HMACKey
	f := func(keyLen, msgLen, split int) {
		t.Helper()
		key, msg := buf[:keyLen], buf[64:64+msgLen]
		want := refHMAC(key, msg)
		h.SetKey(&k, key)
		if got := h.Sum(&k, msg); got != want {
			t.Fatalf("Sum(key %d bytes, msg %d bytes) differs from crypto/hmac", keyLen, msgLen)
		}
		// Streaming in two parts, and the same key used again (a verify and a
		// signature share one HMACKey).
		h.Begin(&k)
		h.Write(msg[:split])
		h.Write(msg[split:])
		if got := h.End(&k); got != want {
			t.Fatalf("Begin/Write/End(key %d, msg %d split at %d) differs from crypto/hmac", keyLen, msgLen, split)
		}
	}
	for kl := 0; kl <= 64; kl++ {
		for _, m := range []int{0, 1, 31, 32, 55, 56, 63, 64, 65, 76, 119, 120, 548, engine.MaxHMACMessage} {
			f(kl, m, m/3)
		}
	}
	for m := 0; m <= 600; m++ {
		f(32, m, r.IntN(m+1))
	}
}

func TestKeyringWithMatchesPlainDerivation(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	h := engine.NewHMAC()
	f := func(key [32]byte, id engine.UUID) {
		t.Helper()
		k := engine.NewKeyring(key)
		hd := engine.Handle{UUID: id}
		if k.PresenceWith(h, hd) != k.Presence(hd) {
			t.Fatal("PresenceWith differs from Presence")
		}
		if k.AttemptClientWith(h, hd) != k.AttemptClient(hd) {
			t.Fatal("AttemptClientWith differs from AttemptClient")
		}
		pc := k.Presence(hd)
		a := engine.Handle{UUID: engine.UUID{byte(r.Uint32()), 9}}
		if engine.HostAttemptCapabilityWith(h, &pc, a) != engine.HostAttemptCapability(&pc, a) {
			t.Fatal("HostAttemptCapabilityWith differs from HostAttemptCapability")
		}
		// The independent oracle: HMAC(key, "presence" || 0x00 || id).
		msg := append(append([]byte(engine.LabelPresence), 0), id[:]...)
		if k.PresenceWith(h, hd) != engine.Capability(refHMAC(key[:], msg)) {
			t.Fatal("PresenceWith differs from crypto/hmac")
		}
	}
	f([32]byte{}, engine.UUID{})
	for range 200 {
		var key [32]byte
		var id engine.UUID
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		for i := range id {
			id[i] = byte(r.Uint32())
		}
		f(key, id)
	}
	if engine.RandomKeyring().PresenceWith(h, engine.Handle{}) == engine.RandomKeyring().PresenceWith(h, engine.Handle{}) {
		t.Fatal("two random keyrings derive the same capability")
	}
}

func TestHMACDoesNotAllocate(t *testing.T) {
	h := engine.NewHMAC()
	k := engine.NewKeyring([32]byte{1})
	var mk engine.HMACKey
	key := make([]byte, 32)
	msg := make([]byte, 120)
	hd := engine.Handle{UUID: engine.UUID{7}}
	var c engine.Capability
	f := func(name string, fn func()) {
		t.Helper()
		if n := testing.AllocsPerRun(100, fn); n != 0 {
			t.Fatalf("%s allocates %v times per call", name, n)
		}
	}
	h.SetKey(&mk, key)
	if !raceEnabled { // see hmac_race_on_test.go
		f("SetKey", func() { h.SetKey(&mk, key) })
		f("HostAttemptCapabilityWith", func() { c = engine.HostAttemptCapabilityWith(h, &c, hd) })
	}
	f("Sum", func() { c = h.Sum(&mk, msg) })
	f("Begin/Write/End", func() { h.Begin(&mk); h.Write(msg); c = h.End(&mk) })
	f("PresenceWith", func() { c = k.PresenceWith(h, hd) })
	f("AttemptClientWith", func() { c = k.AttemptClientWith(h, hd) })
}

func TestHMACRejectsMisuse(t *testing.T) {
	h := engine.NewHMAC()
	f := func(name string, fn func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s did not panic", name)
			}
		}()
		fn()
	}
	var k engine.HMACKey
	f("SetKey with a 65-byte key", func() { h.SetKey(&k, make([]byte, 65)) })
	if k != (engine.HMACKey{}) {
		t.Fatal("a rejected key changed the HMACKey")
	}
	f("Sum with an unset HMACKey", func() { h.Sum(&k, nil) })
	f("Begin with an unset HMACKey", func() { h.Begin(&k) })
}

func TestHMACKeyIsRedacted(t *testing.T) {
	var k engine.HMACKey
	engine.NewHMAC().SetKey(&k, []byte("0123456789abcdef0123456789abcdef"))
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %x %s", k, k, k, k, k), k.String(), k.GoString()} {
		if s != "[REDACTED]" && s != "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]" {
			t.Fatalf("HMACKey printed as %q", s)
		}
	}
}

func TestKeyringIsRedacted(t *testing.T) {
	k := engine.NewKeyring([32]byte{'s', 'e', 'c', 'r', 'e', 't'})
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v", *k), fmt.Sprintf("%+v", k), fmt.Sprintf("%#v", k), fmt.Sprintf("%x", *k)} {
		if s != "[REDACTED]" {
			t.Fatalf("Keyring printed as %q", s)
		}
	}
}

// A Keyring is shared by every reader; each has its own HMAC (run with -race).
func TestKeyringWithIsSafeForConcurrentUse(t *testing.T) {
	k := engine.NewKeyring([32]byte{4, 2})
	want := make([]engine.Capability, 64)
	for i := range want {
		want[i] = k.Presence(engine.Handle{UUID: engine.UUID{byte(i)}})
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := engine.NewHMAC()
			for n := range 2000 {
				i := (n + g) % len(want)
				if k.PresenceWith(h, engine.Handle{UUID: engine.UUID{byte(i)}}) != want[i] {
					errs <- "concurrent PresenceWith gave a wrong capability"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
