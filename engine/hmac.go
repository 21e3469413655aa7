package engine

import (
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"fmt"
	"hash"
)

// sha256StateSize is the length of crypto/sha256's marshaled digest state:
// a 4-byte magic, 8 words of state, the 64-byte pending block and the 8-byte
// length. NewHMAC checks it, so a Go release that changes the format fails
// loudly at start instead of computing wrong MACs.
const sha256StateSize = 4 + 8*4 + 64 + 8

// HMACKey is one key's HMAC-SHA256 pad states: the SHA-256 states after
// absorbing key⊕ipad and key⊕opad (RFC 2104). With them an HMAC of a short
// message costs its own blocks plus one outer block, instead of two more for
// the pads. It is as secret as the key it was made from: it prints as
// "[REDACTED]", and like a capability it is derived when needed and never
// stored beyond the request that needed it. It is a plain value with no
// pointers; the zero value is not a key (using one panics). Computed by
// HMAC.SetKey or held by a Keyring; read-only after that, so safe to share.
type HMACKey struct{ inner, outer [sha256StateSize]byte }

func (HMACKey) String() string             { return "[REDACTED]" }
func (HMACKey) GoString() string           { return "[REDACTED]" }
func (HMACKey) Format(f fmt.State, _ rune) { f.Write([]byte("[REDACTED]")) }

// HMAC computes HMAC-SHA256 from precomputed HMACKeys without allocating:
// one SHA-256 digest, allocated by NewHMAC and reset from the key's saved
// states for every MAC, plus scratch for pads and short messages. An HMAC
// belongs to one goroutine (a UDP reader keeps one) and is not safe for
// concurrent use; the HMACKeys and Keyrings it reads may be shared.
//
// The digest is reached through the hash.Hash interface, so the bytes given
// to Write and the HMACKeys given to SetKey, Begin, End and Sum escape: keep
// them in long-lived memory (datagram buffers, a per-goroutine struct, the
// HMAC's own scratch), not in stack variables, or every call allocates (the
// zero-allocation tests catch that).
type HMAC struct {
	d     hash.Hash
	u     encoding.BinaryUnmarshaler
	a     encoding.BinaryAppender
	pad   [64]byte // key⊕ipad, key⊕opad
	msg   [64]byte // short messages: derivation inputs
	inner [32]byte // inner digest, then the MAC
	tmp   HMACKey  // HostAttemptCapabilityWith's presence key
}

// NewHMAC returns an HMAC with its own digest. It panics if crypto/sha256's
// digest no longer marshals its state as this file expects.
func NewHMAC() *HMAC {
	d := sha256.New()
	u, okU := d.(encoding.BinaryUnmarshaler)
	a, okA := d.(encoding.BinaryAppender)
	if !okU || !okA {
		panic("BUG: crypto/sha256 digest cannot save and restore its state")
	}
	var probe [sha256StateSize + 1]byte
	if st, err := a.AppendBinary(probe[:0]); err != nil || len(st) != sha256StateSize {
		panic("BUG: crypto/sha256 marshaled state has an unexpected size")
	}
	return &HMAC{d: d, u: u, a: a}
}

// SetKey computes dst from key (at most 64 bytes; the service's keys and
// capabilities are 32): two SHA-256 blocks. It panics on a longer key:
// callers bound it. Zero allocations (except under the race detector, where
// crypto/sha256's AppendBinary allocates).
func (h *HMAC) SetKey(dst *HMACKey, key []byte) {
	if len(key) > 64 {
		panic("BUG: HMAC key longer than a block")
	}
	h.padWith(key, 0x36)
	h.save(&dst.inner)
	h.padWith(key, 0x5c)
	h.save(&dst.outer)
	clear(h.pad[:])
}

func (h *HMAC) padWith(key []byte, x byte) {
	n := copy(h.pad[:], key)
	clear(h.pad[n:])
	xx := uint64(x) * 0x0101010101010101
	for i := 0; i < len(h.pad); i += 8 {
		binary.LittleEndian.PutUint64(h.pad[i:], binary.LittleEndian.Uint64(h.pad[i:])^xx)
	}
	h.d.Reset()
	h.d.Write(h.pad[:])
}

// save copies the digest's state into dst.
func (h *HMAC) save(dst *[sha256StateSize]byte) {
	st, err := h.a.AppendBinary(dst[:0])
	if err != nil || len(st) != sha256StateSize || &st[0] != &dst[0] {
		panic("BUG: crypto/sha256 state did not fit its buffer")
	}
}

func (h *HMAC) restore(st *[sha256StateSize]byte) {
	if err := h.u.UnmarshalBinary(st[:]); err != nil {
		panic("BUG: HMACKey not set")
	}
}

// Begin starts a MAC keyed by k; Write the message, then End with the same k.
func (h *HMAC) Begin(k *HMACKey) { h.restore(&k.inner) }

// Write appends p to the message (see the type's note on escaping).
func (h *HMAC) Write(p []byte) { h.d.Write(p) }

// End returns HMAC-SHA256(k, everything written since Begin).
func (h *HMAC) End(k *HMACKey) [32]byte {
	h.d.Sum(h.inner[:0])
	h.restore(&k.outer)
	h.d.Write(h.inner[:])
	h.d.Sum(h.inner[:0])
	return h.inner
}

// Sum returns HMAC-SHA256(k, msg).
func (h *HMAC) Sum(k *HMACKey, msg []byte) [32]byte {
	h.Begin(k)
	h.d.Write(msg)
	return h.End(k)
}

// HostAttemptCapabilityWith is HostAttemptCapability computed with h's
// digest instead of a fresh one per hash; same result, no allocation.
func HostAttemptCapabilityWith(h *HMAC, presence *Capability, attempt Handle) Capability {
	k := &h.tmp
	h.SetKey(k, presence[:])
	n := copy(h.msg[:], hostAttemptLabel)
	n += copy(h.msg[n:], attempt.UUID[:])
	c := Capability(h.Sum(k, h.msg[:n]))
	*k = HMACKey{}
	return c
}
