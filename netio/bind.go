package netio

import (
	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// bindSuccess answers an accepted attempt bind
// (docs/contracts/udp.md#attempt-bind,
// docs/contracts/udp.md#answers-and-their-sizes): XOR-MAPPED-ADDRESS, the
// attempt's RDV-LIFETIME and, for a relay-only attempt, RDV-RELAY-ONLY, signed;
// then, when both endpoints are bound, the introductions
// (docs/contracts/udp.md#introduce), and when both relayed addresses are known,
// the relay introductions. A bind carrying a relayed address has given up on
// the direct path: it gets no INTRODUCE re-sent (one consumed by this very bind
// still goes to both sides).
func (p *processor) bindSuccess(r *request, meth method, op *engine.Op) {
	p.attemptSuccess(r, meth, op, op.Attempt.RelayOnly)
	if op.IntroReady && (op.FirstIntro || !r.relayed) {
		p.introduce(r, op)
	}
	if op.RelayReady {
		p.relayIntroduce(r, op)
	}
}

// reportSuccess answers an accepted outcome report like a bind and counts
// the side's first report in the tenant's outcome series.
func (p *processor) reportSuccess(r *request, meth method, op *engine.Op) {
	p.attemptSuccess(r, meth, op, false)
	if !op.Duplicate {
		p.punch.record(op.Tenant, op.Report.Role, byte(op.Report.Path), op.Report.ConnectMillis)
	}
}

// attemptSuccess encodes the signed success answer to an attempt request.
func (p *processor) attemptSuccess(r *request, meth method, op *engine.Op, relayOnly bool) {
	s := p.slot(r.src, r.local)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.BindingSuccess, r.txID)
	b.AddXORAddress(stun.AttrXORMappedAddress, r.src)
	b.AddUint32(stun.AttrLifetime, lifetimeSeconds(op.Attempt.TTL))
	if relayOnly {
		b.AddBytes(stun.AttrRelayOnly, nil)
	}
	b.AddIntegrityWith(p.mac, &r.pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[meth][resOK]++
	}
}
