package netio

import (
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// authResult says how a request's USERNAME and integrity check went.
type authResult uint8

const (
	authOK authResult = iota
	// authFailed: bad USERNAME form, missing or wrong integrity, or a key
	// that cannot be derived (CONTRACT.md §7.2): unsigned 401.
	authFailed
)

// authenticate derives the capability a request's USERNAME names and
// verifies MESSAGE-INTEGRITY-SHA256 with it, outside any lock (CONTRACT.md
// §4, §7.1, §7.2). p: and c: keys derive from the handle alone; an h: key
// needs the attempt's listing's presence handle, which store.AttemptHost
// reads (an attempt that is gone cannot be verified: 401). On success it
// returns the kind, handle and capability. Zero allocations.
func authenticate(m *stun.Message, username []byte, keys *engine.Keyring, store engine.Store) (kind byte, h engine.Handle, key engine.Capability, r authResult) {
	kind, h, ok := stun.ParseUsername(username)
	if !ok || !m.HasIntegrity() {
		return 0, h, key, authFailed
	}
	key, ok = deriveCapability(kind, h, keys, store)
	if !ok || !m.CheckIntegrity(key[:]) {
		return 0, h, engine.Capability{}, authFailed
	}
	return kind, h, key, authOK
}

// deriveCapability returns the capability for a USERNAME kind and handle.
func deriveCapability(kind byte, h engine.Handle, keys *engine.Keyring, store engine.Store) (engine.Capability, bool) {
	switch kind {
	case stun.KindPresence:
		return keys.Presence(h), true
	case stun.KindAttemptClient:
		return keys.AttemptClient(h), true
	case stun.KindAttemptHost:
		ph, ok := store.AttemptHost(h)
		if !ok {
			return engine.Capability{}, false
		}
		pc := keys.Presence(ph)
		return engine.HostAttemptCapability(&pc, h), true
	}
	return engine.Capability{}, false
}
