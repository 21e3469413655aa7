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
	// that cannot be derived (docs/contracts/udp.md#authentication): unsigned 401.
	authFailed
	// authUnreachable: an h: key whose attempt the store could not look up
	// because it did not answer (engine.HostResolver): no answer, so the
	// host retransmits instead of taking its attempt for gone.
	authUnreachable
)

// authenticate derives the capability the USERNAME of p.msg names and verifies
// its MESSAGE-INTEGRITY-SHA256, outside any lock
// (docs/contracts/udp.md#authentication). p: and c: keys derive from the handle
// alone; an h: key needs the attempt's listing's presence handle, which
// store.AttemptHost reads (an attempt that is gone cannot be verified: 401). On
// success it fills req's kind, handle, key and pads: the capability's HMAC pad
// states, computed once here and reused to sign every answer to this datagram
// (never kept beyond the batch). Zero allocations.
func (p *processor) authenticate(username []byte, req *request) authResult {
	kind, h, ok := stun.ParseUsername(username)
	if !ok || !p.msg.HasIntegrity() {
		return authFailed
	}
	key, res := p.deriveCapability(kind, h)
	if res != authOK {
		return res
	}
	p.mac.SetKey(&req.pads, key[:])
	if !p.msg.CheckIntegrityWith(p.mac, &req.pads) {
		return authFailed
	}
	req.kind, req.handle, req.key = kind, h, key
	return authOK
}

// deriveCapability returns the capability for a USERNAME kind and handle.
func (p *processor) deriveCapability(kind byte, h engine.Handle) (engine.Capability, authResult) {
	switch kind {
	case stun.KindPresence:
		return p.keys.PresenceWith(p.mac, h), authOK
	case stun.KindAttemptClient:
		return p.keys.AttemptClientWith(p.mac, h), authOK
	case stun.KindAttemptHost:
		ph, ok, reached := p.attemptHost(h)
		if !reached {
			return engine.Capability{}, authUnreachable
		}
		if !ok {
			return engine.Capability{}, authFailed
		}
		pc := p.keys.PresenceWith(p.mac, ph)
		return engine.HostAttemptCapabilityWith(p.mac, &pc, h), authOK
	}
	return engine.Capability{}, authFailed
}

// attemptHost asks the store for an attempt's presence handle; reached is
// false only on a store that can fail to answer (engine.HostResolver).
func (p *processor) attemptHost(h engine.Handle) (presence engine.Handle, ok, reached bool) {
	if p.hosts != nil {
		return p.hosts.ResolveAttemptHost(h)
	}
	presence, ok = p.store.AttemptHost(h)
	return presence, ok, true
}
