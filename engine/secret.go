package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
)

// Capability is a 32-byte secret proving the right to act on one lease or
// handle. It is derived, never stored. Its String and fmt verbs print
// "[REDACTED]" so a capability cannot leak through a log line by accident;
// AppendToken is the one way to reveal it, for the response to its owner.
type Capability [32]byte

func (Capability) String() string               { return "[REDACTED]" }
func (Capability) GoString() string             { return "[REDACTED]" }
func (Capability) Format(f fmt.State, _ rune)   { f.Write([]byte("[REDACTED]")) }
func (Capability) MarshalText() ([]byte, error) { return []byte("[REDACTED]"), nil }
func (c *Capability) AppendToken(dst []byte) []byte {
	return base64.RawURLEncoding.AppendEncode(dst, c[:])
}

// ParseToken decodes a 43-character base64url (no padding) capability.
func ParseToken[T ~string | ~[]byte](s T) (Capability, bool) {
	var c Capability
	if len(s) != 43 {
		return c, false
	}
	var buf [43]byte
	copy(buf[:], s)
	n, err := base64.RawURLEncoding.Strict().Decode(c[:], buf[:])
	return c, err == nil && n == 32
}

// Fingerprint is what the store keeps of a capability: SHA-256 truncated to
// 16 bytes. It is redacted in output like the capability itself.
type Fingerprint [16]byte

func (Fingerprint) String() string               { return "[REDACTED]" }
func (Fingerprint) GoString() string             { return "[REDACTED]" }
func (Fingerprint) Format(f fmt.State, _ rune)   { f.Write([]byte("[REDACTED]")) }
func (Fingerprint) MarshalText() ([]byte, error) { return []byte("[REDACTED]"), nil }

// FingerprintOf returns the stored form of c.
func FingerprintOf(c *Capability) Fingerprint {
	sum := sha256.Sum256(c[:])
	var f Fingerprint
	copy(f[:], sum[:16])
	return f
}

// Equal compares fingerprints in constant time: both halves are XORed and
// ORed without an early exit (subtle.ConstantTimeCompare does the same byte
// by byte, through a call, on every datagram). Stores compare a request's
// key with the stored one through it, never with ==.
func (f *Fingerprint) Equal(g *Fingerprint) bool {
	x := binary.LittleEndian.Uint64(f[:8]) ^ binary.LittleEndian.Uint64(g[:8])
	x |= binary.LittleEndian.Uint64(f[8:]) ^ binary.LittleEndian.Uint64(g[8:])
	return x == 0
}

// Capability labels (docs/contracts/semantics.md#capabilities).
const (
	LabelLease         = "lease"
	LabelPresence      = "presence"
	LabelAttemptClient = "attempt-client"
	hostAttemptLabel   = "rdv-attempt-host"
	// LabelForward derives the key that authenticates pushes forwarded
	// between the instances of a deployment (netio).
	LabelForward = "rdv-forward"
)

// Keyring derives capabilities from the process's capability key. It is
// immutable and safe for concurrent use. It keeps the key's HMAC pad states
// (computed once by the constructor) for the *With derivations, which take
// the caller's per-goroutine HMAC scratch.
type Keyring struct {
	key  [32]byte
	pads HMACKey
}

// A Keyring prints as "[REDACTED]": it holds the capability key.
func (Keyring) String() string             { return "[REDACTED]" }
func (Keyring) GoString() string           { return "[REDACTED]" }
func (Keyring) Format(f fmt.State, _ rune) { f.Write([]byte("[REDACTED]")) }

// NewKeyring uses a configured key (shared-state mode).
func NewKeyring(key [32]byte) *Keyring {
	k := &Keyring{key: key}
	NewHMAC().SetKey(&k.pads, k.key[:])
	return k
}

// RandomKeyring makes a key at process start, so a restart invalidates every
// capability issued before it.
func RandomKeyring() *Keyring {
	var key [32]byte
	_, _ = rand.Read(key[:]) // never fails since Go 1.24: it crashes the process instead
	return NewKeyring(key)
}

func (k *Keyring) Lease(id LeaseID) Capability  { return k.derive(LabelLease, id.UUID) }
func (k *Keyring) Presence(h Handle) Capability { return k.derive(LabelPresence, h.UUID) }
func (k *Keyring) AttemptClient(h Handle) Capability {
	return k.derive(LabelAttemptClient, h.UUID)
}

// ForwardKey is HMAC-SHA256(key, "rdv-forward" || 0x00 || 16 zero bytes):
// the key of the MACs on forwarded pushes, distinct from every capability
// (no capability is derived under that label).
func (k *Keyring) ForwardKey() Capability { return k.derive(LabelForward, UUID{}) }

// PresenceWith is Presence computed with h (the caller's per-goroutine
// scratch) from the key's saved pad states: two SHA-256 blocks instead of
// four, no allocation. Same result as Presence.
func (k *Keyring) PresenceWith(h *HMAC, hd Handle) Capability {
	return k.deriveWith(h, LabelPresence, hd.UUID)
}

// AttemptClientWith is AttemptClient computed with h, as PresenceWith.
func (k *Keyring) AttemptClientWith(h *HMAC, hd Handle) Capability {
	return k.deriveWith(h, LabelAttemptClient, hd.UUID)
}

// derive computes HMAC-SHA256(key, label || 0x00 || id).
func (k *Keyring) derive(label string, id UUID) Capability {
	var msg [32 + 1 + 16]byte
	n := deriveInput(msg[:], label, id)
	return Capability(HMACSHA256(k.key[:], msg[:n]))
}

func (k *Keyring) deriveWith(h *HMAC, label string, id UUID) Capability {
	n := deriveInput(h.msg[:], label, id)
	return Capability(h.Sum(&k.pads, h.msg[:n]))
}

// deriveInput writes label || 0x00 || id into dst and returns its length.
func deriveInput(dst []byte, label string, id UUID) int {
	n := copy(dst, label)
	dst[n] = 0
	n++
	return n + copy(dst[n:], id[:])
}

// HostAttemptCapability is the host's attempt capability, which the host
// derives from its presence capability:
// HMAC-SHA256(presence_cap, "rdv-attempt-host" || attempt_handle_bytes).
func HostAttemptCapability(presence *Capability, attempt Handle) Capability {
	var msg [len(hostAttemptLabel) + 16]byte
	n := copy(msg[:], hostAttemptLabel)
	copy(msg[n:], attempt.UUID[:])
	return Capability(HMACSHA256(presence[:], msg[:]))
}

// HMACSHA256 computes HMAC-SHA256 for a key of at most 64 bytes and a message
// of at most MaxHMACMessage bytes without allocating (crypto/hmac allocates
// its hash state on every New). It panics on larger inputs: callers bound them.
// Messages up to smallHMACMessage bytes (every request a client signs) are
// assembled in a 320-byte buffer, so the 1.6 KB one is zeroed only for
// larger ones. Hot paths that reuse a key use HMAC with an HMACKey instead.
func HMACSHA256(key, msg []byte) [32]byte {
	if len(key) > 64 || len(msg) > MaxHMACMessage {
		panic("BUG: HMACSHA256 input too large")
	}
	if len(msg) <= smallHMACMessage {
		var buf [64 + smallHMACMessage]byte
		return hmacInto(buf[:], key, msg)
	}
	var buf [64 + MaxHMACMessage]byte
	return hmacInto(buf[:], key, msg)
}

// smallHMACMessage: messages up to this size use the small buffer.
const smallHMACMessage = 256

// hmacInto computes HMAC-SHA256(key, msg) using buf (at least 64+len(msg)
// and 96 bytes) as scratch.
func hmacInto(buf, key, msg []byte) [32]byte {
	for i := 0; i < 64; i++ {
		var b byte
		if i < len(key) {
			b = key[i]
		}
		buf[i] = b ^ 0x36
	}
	n := 64 + copy(buf[64:], msg)
	inner := sha256.Sum256(buf[:n])
	for i := 0; i < 64; i++ {
		buf[i] ^= 0x36 ^ 0x5c
	}
	copy(buf[64:], inner[:])
	return sha256.Sum256(buf[:64+32])
}

// MaxHMACMessage bounds HMACSHA256's message: a whole STUN datagram fits.
const MaxHMACMessage = 1536
