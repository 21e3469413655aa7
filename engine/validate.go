package engine

import (
	"encoding/binary"
	"net/netip"
)

// Fixed input errors are shared values so that rejecting bad input on the
// per-datagram paths does not allocate. Callers must not modify them.
var (
	errPublic        = &InputError{Field: "public", Reason: "must be a valid address with a non-zero port"}
	errLocal         = &InputError{Field: "local", Reason: "must be absent or a valid address with a non-zero port"}
	errRole          = &InputError{Field: "role", Reason: "must be host or client"}
	errRelayed       = &InputError{Field: "relayed", Reason: "must be absent or a valid address with a non-zero port"}
	errPath          = &InputError{Field: "path", Reason: "must be direct, relayed or failed"}
	errOpKind        = &InputError{Field: "kind", Reason: "must be OpPresence, OpBindAttempt or OpOutcome"}
	errProtocol      = &InputError{Field: "protocol_version", Reason: "must be 1..4294967295"}
	errLimit         = &InputError{Field: "limit", Reason: "must be 1..100"}
	errRegion        = &InputError{Field: "region", Reason: "must be 1-32 characters of [a-z0-9-]"}
	errPlayers       = &InputError{Field: "current_players", Reason: "must be 0..max_players"}
	errRevocationTTL = &InputError{Field: "ttl_s", Reason: "must be 1..600 seconds"}
	errDocTooLarge   = &InputError{Field: "doc", Reason: "must be at most 64 KiB"}
	errSeq           = &InputError{Field: "seq", Reason: "must be at most 2^53-1"}
)

// MaxDoc bounds CreateListing.Doc.
const MaxDoc = 64 << 10

// zeroAddrPort is the absent endpoint: a Local left unset.
var zeroAddrPort netip.AddrPort

// validEndpoints checks an observed public endpoint and an optional local one.
func validEndpoints(public, local netip.AddrPort) error {
	if !public.IsValid() || public.Port() == 0 {
		return errPublic
	}
	if local != zeroAddrPort && (!local.IsValid() || local.Port() == 0) {
		return errLocal
	}
	return nil
}

// validatePresence checks a presence refresh's endpoints and sequence (Seq
// 0 is not an input error but stale: Conflict, CONTRACT.md §7.7).
func validatePresence(cmd *BindPresence) error {
	if cmd.Seq > MaxPresenceSeq {
		return errSeq
	}
	return validEndpoints(cmd.Public, cmd.Local)
}

// validRegion reports whether r is 1-32 characters of [a-z0-9-].
func validRegion(r string) bool {
	return len(r) >= 1 && len(r) <= MaxRegionLen && allBytes(r, isRegionByte)
}

// keyEqual compares fingerprints in constant time: both halves are XORed
// and ORed without an early exit (subtle.ConstantTimeCompare does the same
// byte by byte, through a call, on every datagram).
func keyEqual(a, b *Fingerprint) bool {
	x := binary.LittleEndian.Uint64(a[:8]) ^ binary.LittleEndian.Uint64(b[:8])
	x |= binary.LittleEndian.Uint64(a[8:]) ^ binary.LittleEndian.Uint64(b[8:])
	return x == 0
}
