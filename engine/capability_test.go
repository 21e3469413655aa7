package engine_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
)

// refHMAC is the independent oracle: the standard library's HMAC.
func refHMAC(key, msg []byte) [32]byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	var out [32]byte
	copy(out[:], m.Sum(nil))
	return out
}

func TestHMACSHA256MatchesCryptoHMAC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, engine.MaxHMACMessage+64)
	for i := range buf {
		buf[i] = byte(r.Uint32())
	}
	f := func(keyLen, msgLen int) {
		t.Helper()
		key, msg := buf[:keyLen], buf[64:64+msgLen]
		if got, want := engine.HMACSHA256(key, msg), refHMAC(key, msg); got != want {
			t.Fatalf("HMACSHA256(key %d bytes, msg %d bytes) differs from crypto/hmac", keyLen, msgLen)
		}
	}
	// Every key length, at message lengths around the SHA-256 block edges.
	for k := 0; k <= 64; k++ {
		for _, m := range []int{0, 1, 31, 32, 33, 55, 56, 63, 64, 65, 119, 120, 128, 548, 1200, engine.MaxHMACMessage} {
			f(k, m)
		}
	}
	// Every message length with the key lengths the service uses (32) and the block size.
	for m := 0; m <= engine.MaxHMACMessage; m++ {
		f(32, m)
		if m%7 == 0 {
			f(64, m)
			f(r.IntN(65), m)
		}
	}
}

func TestHMACSHA256RejectsOversizedInput(t *testing.T) {
	f := func(keyLen, msgLen int) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("HMACSHA256(key %d, msg %d) did not panic", keyLen, msgLen)
			}
		}()
		engine.HMACSHA256(make([]byte, keyLen), make([]byte, msgLen))
	}
	f(65, 0)
	f(32, engine.MaxHMACMessage+1)
}

func TestHMACSHA256DoesNotAllocate(t *testing.T) {
	key, msg := make([]byte, 32), make([]byte, 1200)
	var sink [32]byte
	if n := testing.AllocsPerRun(100, func() { sink = engine.HMACSHA256(key, msg) }); n != 0 {
		t.Fatalf("HMACSHA256 allocates %v times per call", n)
	}
	_ = sink
}

// TestKeyringDerivation recomputes every capability with crypto/hmac from
// the contract's layout: HMAC-SHA256(key, label || 0x00 || id) and
// HMAC-SHA256(presence_cap, "rdv-attempt-host" || handle).
func TestKeyringDerivation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 200; n++ {
		var key [32]byte
		for i := range key {
			key[i] = byte(r.Uint32())
		}
		k := engine.NewKeyring(key)
		id := engine.NewUUID()
		derive := func(label string) [32]byte {
			msg := append(append([]byte(label), 0), id[:]...)
			return refHMAC(key[:], msg)
		}
		lease := k.Lease(engine.LeaseID{UUID: id})
		presence := k.Presence(engine.Handle{UUID: id})
		client := k.AttemptClient(engine.Handle{UUID: id})
		if [32]byte(lease) != derive("lease") || [32]byte(presence) != derive("presence") || [32]byte(client) != derive("attempt-client") {
			t.Fatalf("Keyring derivation differs from HMAC(key, label||0x00||id)")
		}
		if lease == presence || presence == client || lease == client {
			t.Fatalf("labels do not separate capabilities")
		}
		attempt := engine.NewUUID()
		host := engine.HostAttemptCapability(&presence, engine.Handle{UUID: attempt})
		want := refHMAC(presence[:], append([]byte("rdv-attempt-host"), attempt[:]...))
		if [32]byte(host) != want {
			t.Fatalf("host attempt capability differs from HMAC(presence_cap, \"rdv-attempt-host\"||handle)")
		}
		fp := engine.FingerprintOf(&host)
		sum := sha256.Sum256(host[:])
		if [16]byte(fp) != [16]byte(sum[:16]) {
			t.Fatalf("FingerprintOf is not SHA-256 truncated to 16 bytes")
		}
		// Another key derives other capabilities.
		key[0] ^= 1
		if k2 := engine.NewKeyring(key); k2.Lease(engine.LeaseID{UUID: id}) == lease {
			t.Fatalf("a different key derived the same capability")
		}
	}
	if a, b := engine.RandomKeyring(), engine.RandomKeyring(); a.Lease(engine.LeaseID{}) == b.Lease(engine.LeaseID{}) {
		t.Fatalf("two random keyrings derive the same capability")
	}
}

func TestTokenRoundTrip(t *testing.T) {
	k := engine.RandomKeyring()
	for n := 0; n < 100; n++ {
		c := k.Presence(engine.Handle{UUID: engine.NewUUID()})
		tok := c.AppendToken(nil)
		if len(tok) != 43 || strings.ContainsAny(string(tok), "+/=") {
			t.Fatalf("token is not 43 chars of base64url without padding")
		}
		back, ok := engine.ParseToken(tok)
		if !ok || back != c {
			t.Fatalf("ParseToken(AppendToken(c)) != c")
		}
	}
	f := func(s string) {
		t.Helper()
		if _, ok := engine.ParseToken(s); ok {
			t.Fatalf("ParseToken(%q) accepted", s)
		}
	}
	f("")
	f(strings.Repeat("A", 42))
	f(strings.Repeat("A", 44))
	f(strings.Repeat("A", 42) + "=")
	f(strings.Repeat("A", 42) + "+")
	f(strings.Repeat("A", 42) + "B") // non-zero trailing bits: not canonical
}

// TestSecretsNeverPrint formats capabilities and fingerprints with every
// verb, alone, through pointers and inside structs, slices and maps, and
// requires that none of their bytes appear in any encoding.
func TestSecretsNeverPrint(t *testing.T) {
	k := engine.RandomKeyring()
	c := k.Presence(engine.Handle{UUID: engine.NewUUID()})
	fp := engine.FingerprintOf(&c)
	type holder struct {
		Name string
		Cap  engine.Capability
		FP   engine.Fingerprint
		PCap *engine.Capability
	}
	h := holder{Name: "x", Cap: c, FP: fp, PCap: &c}
	values := []any{c, &c, fp, &fp, h, &h, []engine.Capability{c}, map[string]engine.Fingerprint{"k": fp},
		[1]engine.Fingerprint{fp}, struct{ Inner holder }{h}}
	leaks := func(s string) bool {
		for _, b := range [][]byte{c[:], fp[:]} {
			for _, enc := range []string{fmt.Sprintf("%x", b), fmt.Sprintf("%X", b), fmt.Sprint(b), fmt.Sprintf("%v", b[:4]),
				string(b[:8]), string((&c).AppendToken(nil))[:8]} {
				if strings.Contains(s, enc) {
					return true
				}
			}
		}
		return false
	}
	// The detector itself must see unredacted bytes.
	for _, raw := range []string{fmt.Sprintf("%x", [32]byte(c)), fmt.Sprintf("%v", [16]byte(fp)), fmt.Sprintf("%X", [16]byte(fp)), string(c.AppendToken(nil))} {
		if !leaks(raw) {
			t.Fatalf("BUG: leak detector misses %q", raw)
		}
	}
	for i, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%o", "%b", "%T %v", "%10v", "%-40s"} {
			out := fmt.Sprintf(verb, v)
			if leaks(out) {
				t.Fatalf("value %d formatted with %s leaks secret bytes: %s", i, verb, out)
			}
		}
		if out := fmt.Sprint(v) + fmt.Sprintln(v); leaks(out) {
			t.Fatalf("value %d leaks through Sprint: %s", i, out)
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal value %d: %v", i, err)
		}
		if leaks(string(j)) {
			t.Fatalf("value %d leaks through JSON: %s", i, j)
		}
		var sb strings.Builder
		slog.New(slog.NewJSONHandler(&sb, nil)).Info("m", "v", v)
		slog.New(slog.NewTextHandler(&sb, nil)).Info("m", "v", v)
		if leaks(sb.String()) {
			t.Fatalf("value %d leaks through slog: %s", i, sb.String())
		}
	}
	if s := fmt.Sprint(c); s != "[REDACTED]" {
		t.Fatalf("Capability prints %q, want [REDACTED]", s)
	}
	if s := fmt.Sprintf("%x", fp); s != "[REDACTED]" {
		t.Fatalf("Fingerprint %%x prints %q, want [REDACTED]", s)
	}
}
