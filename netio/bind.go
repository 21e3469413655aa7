package netio

import (
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// bindSuccess answers an accepted attempt bind (CONTRACT.md §4.3, §7.6):
// XOR-MAPPED-ADDRESS and the attempt's RDV-LIFETIME, signed; then, when both
// endpoints are bound, the introductions (§4.5).
func (p *processor) bindSuccess(r *request, meth method, op *engine.Op) {
	s := p.slot(r.src, r.local)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.BindingSuccess, r.txID)
	b.AddXORAddress(stun.AttrXORMappedAddress, r.src)
	b.AddUint32(stun.AttrLifetime, lifetimeSeconds(op.Attempt.TTL))
	b.AddIntegrityWith(p.mac, &r.pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[meth][resOK]++
	}
	if op.IntroReady {
		p.introduce(r, op)
	}
}
