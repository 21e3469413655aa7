package netio

import (
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// presenceSuccess answers an accepted presence refresh
// (docs/contracts/udp.md#presence-refresh,
// docs/contracts/udp.md#answers-and-their-sizes): XOR-MAPPED-ADDRESS,
// RDV-LIFETIME, then the pending attempts whose host endpoint is not bound yet
// (oldest first, at most 4), signed.
func (p *processor) presenceSuccess(r *request, v *engine.PresenceView) {
	s := p.slot(r.src, r.local)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.BindingSuccess, r.txID)
	b.AddXORAddress(stun.AttrXORMappedAddress, r.src)
	b.AddUint32(stun.AttrLifetime, lifetimeSeconds(v.TTL))
	for i := 0; i < v.NPending && i < len(v.Pending); i++ {
		b.AddAttempt(v.Pending[i])
		queueMark(p.marks, v.Pending[i])
	}
	b.AddIntegrityWith(p.mac, &r.pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[methodPresence][resOK]++
	}
}
