package stun

import "github.com/rendezvous/rendezvous/engine"

// UsernameLen is the length of an authenticated USERNAME: "<kind>:<uuid>".
const UsernameLen = 2 + 36

// Username formats the USERNAME "<kind>:<lowercase handle>" (docs/contracts/udp.md#authentication)
// without allocating.
func Username(kind byte, h engine.Handle) [UsernameLen]byte {
	var u [UsernameLen]byte
	u[0], u[1] = kind, ':'
	h.UUID.AppendText(u[:2])
	return u
}

// ParseUsername splits a USERNAME into its kind and handle. ok is false
// unless it is exactly <p|h|c>:<lowercase canonical UUID> (docs/contracts/udp.md#authentication).
func ParseUsername(b []byte) (kind byte, h engine.Handle, ok bool) {
	if len(b) != UsernameLen || b[1] != ':' {
		return 0, h, false
	}
	switch b[0] {
	case KindPresence, KindAttemptHost, KindAttemptClient:
	default:
		return 0, h, false
	}
	var u engine.UUID
	j := 0
	for i := 2; i < UsernameLen; {
		if i == 10 || i == 15 || i == 20 || i == 25 {
			if b[i] != '-' {
				return 0, h, false
			}
			i++
			continue
		}
		hi, lo := lowerHex[b[i]], lowerHex[b[i+1]]
		if hi|lo == 0xFF {
			return 0, h, false
		}
		u[j] = hi<<4 | lo
		j++
		i += 2
	}
	return b[0], engine.Handle{UUID: u}, true
}

// lowerHex maps '0'-'9' and 'a'-'f' to their values and everything else,
// upper case included, to 0xFF.
var lowerHex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
	}
	return t
}()
