package stun

import "github.com/rendezvous/rendezvous/engine"

// UsernameLen is the length of an authenticated USERNAME: "<kind>:<uuid>".
const UsernameLen = 2 + 36

// Username formats the USERNAME "<kind>:<lowercase handle>" (CONTRACT.md §4)
// without allocating.
func Username(kind byte, h engine.Handle) [UsernameLen]byte {
	var u [UsernameLen]byte
	u[0], u[1] = kind, ':'
	h.UUID.AppendText(u[:2])
	return u
}

// ParseUsername splits a USERNAME into its kind and handle. ok is false
// unless it is exactly <p|h|c>:<lowercase canonical UUID> (CONTRACT.md §7.2).
func ParseUsername(b []byte) (kind byte, h engine.Handle, ok bool) {
	if len(b) != UsernameLen || b[1] != ':' {
		return 0, h, false
	}
	switch b[0] {
	case KindPresence, KindAttemptHost, KindAttemptClient:
	default:
		return 0, h, false
	}
	for _, c := range b[2:] {
		if 'A' <= c && c <= 'F' {
			return 0, h, false
		}
	}
	u, ok := engine.ParseUUID(b[2:])
	if !ok {
		return 0, h, false
	}
	return b[0], engine.Handle{UUID: u}, true
}
