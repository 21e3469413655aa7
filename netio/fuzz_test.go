package netio

import (
	"net/netip"
	"testing"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// FuzzProcessor feeds arbitrary datagrams to the full request handler:
// it must not panic; the store may change only when the datagram passed
// integrity with a capability the keyring derives; unsigned answers are at
// most 32 bytes larger than the datagram and signed ones at most 548 bytes.
func FuzzProcessor(f *testing.F) {
	pf := newProcFixture(f)
	v, pc := pf.listing()
	src := netip.MustParseAddrPort("203.0.113.1:4000")
	buf := make([]byte, 0, 256)
	f.Add(append([]byte(nil), buildInto(buf, 'p', v.Presence, &pc, 1, [12]byte{1})...))
	f.Add(append([]byte(nil), buildInto(buf, 'c', v.Presence, &pc, 0, [12]byte{2})...))
	pb := stun.NewBuilder(make([]byte, 0, 64), stun.BindingRequest, [12]byte{3})
	f.Add(append([]byte(nil), pb.Bytes()...))
	// A relay-only attempt's relayed bind and outcome report.
	pf.feed(src, buildInto(buf, 'p', v.Presence, &pc, 1, [12]byte{1}))
	a := pf.relayAttempt(v, true)
	ck := pf.keys.AttemptClient(a.Handle)
	f.Add(append([]byte(nil), buildRelayed(buf, 'c', a.Handle, &ck, netip.MustParseAddrPort("192.0.2.9:50000"), [12]byte{4})...))
	f.Add(append([]byte(nil), buildOutcome(buf, 'c', a.Handle, &ck, stun.PathRelayed, 900, [12]byte{5})...))
	pf.proc.limiter = newRateLimiter(1e9, 1<<20) // answer every unsigned error, so its size is checked
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > readSlot {
			data = data[:readSlot]
		}
		before := pf.store.Snapshot()
		out := pf.feed(src, data)
		changed := pf.store.Snapshot() != before
		var m stun.Message
		verified := false
		if stun.Parse(data, &m) == nil {
			if name, ok := m.Username(); ok {
				verified = verifiedByReference(&m, name, pf.keys, pf.store)
			}
		}
		if changed && !verified {
			t.Fatal("an unauthenticated datagram changed the store")
		}
		for _, a := range out {
			var am stun.Message
			if err := stun.Parse(a.buf, &am); err != nil {
				t.Fatalf("we sent an unparseable answer: %v", err)
			}
			if am.HasIntegrity() {
				if len(a.buf) > stun.MaxSignedAnswer {
					t.Fatalf("signed answer of %d bytes", len(a.buf))
				}
			} else if len(a.buf) > len(data)+stun.MaxUnsignedGrowth {
				t.Fatalf("unsigned answer of %d bytes to %d", len(a.buf), len(data))
			}
		}
	})
}

// verifiedByReference is the fuzz oracle for authentication, independent of
// the processor's precomputed pads: each capability derived from scratch
// with the plain Keyring methods and checked with the plain
// CheckIntegrity.
func verifiedByReference(m *stun.Message, name []byte, keys *engine.Keyring, store engine.Store) bool {
	kind, h, ok := stun.ParseUsername(name)
	if !ok {
		return false
	}
	var key engine.Capability
	switch kind {
	case stun.KindPresence:
		key = keys.Presence(h)
	case stun.KindAttemptClient:
		key = keys.AttemptClient(h)
	case stun.KindAttemptHost:
		ph, ok := store.AttemptHost(h)
		if !ok {
			return false
		}
		pc := keys.Presence(ph)
		key = engine.HostAttemptCapability(&pc, h)
	default:
		return false
	}
	return m.CheckIntegrity(key[:])
}
