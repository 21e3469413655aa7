package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// The wire values the load tester handles (CONTRACT.md §1), implemented here
// rather than imported from engine so the tester is an independent client
// of the contract: it shares no code with the server it checks.

// UUID is 16 raw bytes; its text is the lowercase 8-4-4-4-12 form.
type UUID [16]byte

// parseUUID accepts the 8-4-4-4-12 hex form in any case.
func parseUUID(s string) (UUID, bool) {
	var u UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	compact := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	if _, err := hex.Decode(u[:], []byte(compact)); err != nil {
		return UUID{}, false
	}
	return u, true
}

// AppendText appends the lowercase canonical form (36 bytes) without allocating.
func (u *UUID) AppendText(dst []byte) []byte {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return append(dst, b[:]...)
}

func (u UUID) String() string { return string(u.AppendText(nil)) }

// Capability is a 32-byte secret. It prints as [REDACTED] so it cannot leak
// into a progress line, a report or a log by accident.
type Capability [32]byte

func (Capability) String() string   { return "[REDACTED]" }
func (Capability) GoString() string { return "[REDACTED]" }

// parseToken decodes a 43-character base64url capability.
func parseToken(s string) (Capability, bool) {
	var c Capability
	if len(s) != 43 {
		return c, false
	}
	n, err := base64.RawURLEncoding.Strict().Decode(c[:], []byte(s))
	return c, err == nil && n == 32
}

// hostAttemptCap derives the host's attempt capability from the presence
// capability: HMAC-SHA256(presence_cap, "rdv-attempt-host" || handle).
func hostAttemptCap(presence *Capability, attempt *UUID) Capability {
	var msg [16 + 16]byte
	copy(msg[:], "rdv-attempt-host")
	copy(msg[16:], attempt[:])
	return Capability(hmacSHA256(presence[:], msg[:]))
}

// maxHMACMsg bounds hmacSHA256's message: every request we sign and every
// signed answer (at most 548 bytes, CONTRACT.md §7.5) fits.
const maxHMACMsg = 1200

// hmacSHA256 computes HMAC-SHA256 for a key of at most 64 bytes without
// allocating (crypto/hmac allocates its state on every New).
func hmacSHA256(key, msg []byte) [32]byte {
	if len(key) > 64 || len(msg) > maxHMACMsg {
		panic("BUG: hmacSHA256 input too large")
	}
	var buf [64 + maxHMACMsg]byte
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
