package netio

import (
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// errorFor maps a store outcome to its STUN error (docs/contracts/semantics.md#outcomes).
func errorFor(o engine.Outcome) (int, result) {
	switch o {
	case engine.NotFound, engine.Expired:
		return stun.CodeNotFound, resNotFound
	case engine.Revoked:
		return stun.CodeForbidden, resForbidden
	case engine.Conflict, engine.ReplayRejected:
		return stun.CodeConflict, resConflict
	case engine.CapacityExceeded:
		return stun.CodeInsufficientCap, resCapacity
	}
	return stun.CodeServiceUnavailable, resUnavailable // Draining, ServiceUnavailable
}

// errorAnswers are the STUN errors the mediator answers, by the result they
// count under: the code and its reason phrase, short so unsigned answers
// stay within their size bound
// (docs/contracts/udp.md#answers-and-their-sizes).
var errorAnswers = [numResults]struct {
	code   int
	reason string
}{
	resBadRequest:   {stun.CodeBadRequest, "Bad Request"},
	resUnauthorized: {stun.CodeUnauthorized, "Unauthorized"},
	resForbidden:    {stun.CodeForbidden, "Forbidden"},
	resNotFound:     {stun.CodeNotFound, "Not Found"},
	resConflict:     {stun.CodeConflict, "Conflict"},
	resUnknownAttr:  {stun.CodeUnknownAttribute, "Unknown"},
	resUnavailable:  {stun.CodeServiceUnavailable, "Unavailable"},
	resCapacity:     {stun.CodeInsufficientCap, "Capacity"},
	resPeerRefused:  {stun.CodePeerRefused, "Peer Refused"},
}

// reasonFor is an error code's reason phrase and result; a code not in
// errorAnswers answers as unavailable.
func reasonFor(code int) (string, result) {
	for r := resBadRequest; r < numResults; r++ {
		if errorAnswers[r].code == code {
			return errorAnswers[r].reason, r
		}
	}
	return errorAnswers[resUnavailable].reason, resUnavailable
}

// plainBinding answers a Binding request without USERNAME
// (docs/contracts/udp.md#plain-binding): XOR-MAPPED-ADDRESS and FINGERPRINT, at
// most 32 bytes more than the request. It never touches the store.
func (p *processor) plainBinding(pk *packet) {
	s := p.slot(pk.addr, pk.local)
	if s == nil {
		return
	}
	b := stun.NewBuilder(s.buf, stun.BindingSuccess, p.msg.TransactionID())
	b.AddXORAddress(stun.AttrXORMappedAddress, pk.addr)
	b.AddFingerprint()
	if p.commit(s, &b, len(pk.buf)+stun.MaxUnsignedGrowth) {
		p.stats.answers[methodBinding][resOK]++
	}
}

// unsignedError answers an unverified request (401, or 420 without USERNAME):
// rate-limited per source, never larger than
// docs/contracts/udp.md#answers-and-their-sizes allows.
func (p *processor) unsignedError(pk *packet, meth method, code int) {
	var unknown []uint16
	if code == stun.CodeUnknownAttribute {
		unknown = p.msg.Unknown()
	}
	p.unsignedAnswer(pk.addr, pk.local, p.msg.TransactionID(), len(pk.buf), meth, code, unknown)
}

// unsignedAnswer encodes an unsigned error to dst for a request of reqLen
// bytes. unknown lists attributes for a 420.
func (p *processor) unsignedAnswer(dst netip.AddrPort, local netip.Addr, txID [12]byte, reqLen int, meth method, code int, unknown []uint16) {
	if !p.limiter.Allow(dst.Addr(), p.nowNS) {
		p.stats.drops[dropRateLimited]++
		return
	}
	s := p.slot(dst, local)
	if s == nil {
		return
	}
	reason, res := reasonFor(code)
	b := stun.NewBuilder(s.buf, stun.BindingError, txID)
	b.AddErrorCode(code, reason)
	if code == stun.CodeUnknownAttribute {
		b.AddUnknownAttributes(unknown)
	}
	b.AddFingerprint()
	if p.commit(s, &b, reqLen+stun.MaxUnsignedGrowth) {
		p.stats.answers[meth][res]++
	}
}

// signedError answers a verified request with an error signed by its
// capability. unknown lists attributes for a 420.
func (p *processor) signedError(r *request, meth method, code int, unknown []uint16) {
	s := p.slot(r.src, r.local)
	if s == nil {
		return
	}
	reason, res := reasonFor(code)
	b := stun.NewBuilder(s.buf, stun.BindingError, r.txID)
	b.AddErrorCode(code, reason)
	if code == stun.CodeUnknownAttribute {
		b.AddUnknownAttributes(unknown)
	}
	b.AddIntegrityWith(p.mac, &r.pads)
	b.AddFingerprint()
	if p.commit(s, &b, stun.MaxSignedAnswer) {
		p.stats.answers[meth][res]++
	}
}

// lifetimeSeconds is whole seconds left, rounded down
// (docs/contracts/udp.md#answers-and-their-sizes).
func lifetimeSeconds(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(d / time.Second)
}
