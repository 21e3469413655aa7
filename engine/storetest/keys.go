package storetest

import "github.com/rendezvous/rendezvous/engine"

// Keys computes capability fingerprints from a store's keyring the way
// clients derive them, for tests of a store outside this suite as well.
type Keys struct{ Ring *engine.Keyring }

// Lease is the fingerprint of a listing's lease capability.
func (k Keys) Lease(id engine.LeaseID) engine.Fingerprint {
	c := k.Ring.Lease(id)
	return engine.FingerprintOf(&c)
}

// Presence is the fingerprint of a listing's presence capability.
func (k Keys) Presence(h engine.Handle) engine.Fingerprint {
	c := k.Ring.Presence(h)
	return engine.FingerprintOf(&c)
}

// Client is the fingerprint of an attempt's client capability.
func (k Keys) Client(attempt engine.Handle) engine.Fingerprint {
	c := k.Ring.AttemptClient(attempt)
	return engine.FingerprintOf(&c)
}

// Host is the fingerprint of an attempt's host capability, derived from the
// listing's presence capability.
func (k Keys) Host(presence, attempt engine.Handle) engine.Fingerprint {
	p := k.Ring.Presence(presence)
	c := engine.HostAttemptCapability(&p, attempt)
	return engine.FingerprintOf(&c)
}

// Bind is a bind of role's endpoint of attempt a, signed with that role's
// capability.
func (k Keys) Bind(a engine.AttemptView, role engine.Role, public, local netipAddrPort) engine.BindAttempt {
	key := k.Client(a.Handle)
	if role == engine.RoleHost {
		key = k.Host(a.HostPresence, a.Handle)
	}
	return engine.BindAttempt{Handle: a.Handle, Role: role, Key: key, Public: public, Local: local}
}
