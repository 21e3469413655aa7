package netio

import (
	"context"
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/netio/stun"
)

// request is one verified datagram waiting for the batch commit.
type request struct {
	src    netip.AddrPort
	local  netip.Addr
	txID   [12]byte
	size   int // the datagram's length: bounds an unsigned answer (docs/contracts/udp.md#answers-and-their-sizes)
	kind   byte
	handle engine.Handle
	key    engine.Capability // the verified capability, never logged
	pads   engine.HMACKey    // key's HMAC pad states: verified the request, sign its answers
	// report: an attempt outcome report (RDV-OUTCOME), not a bind.
	report bool
	// relayed: an attempt bind carrying RDV-RELAYED-ADDRESS.
	relayed bool
}

// method labels the request's answers.
func (r *request) method() method {
	switch {
	case r.report && r.kind == stun.KindAttemptHost:
		return methodReportHost
	case r.report:
		return methodReportClient
	}
	return methodOf(r.kind)
}

// processor turns one read batch into answers: parse and authenticate each
// datagram outside any lock, commit the verified ones with one
// store.ApplyBatch, encode every answer into pooled write slots. It owns all
// its buffers; one processor belongs to one goroutine and is not safe for
// concurrent use. Steady state allocates nothing.
type processor struct {
	store   engine.Store
	hosts   engine.HostResolver // store, if it is one; else nil
	fwd     *forwarder          // nil: every INTRODUCE leaves from here
	relay   *relayPeers         // nil: no relayed address is refused (processor tests)
	keys    *engine.Keyring
	limiter *rateLimiter
	nowNS   int64 // monotonic nanoseconds, read once per batch (or part of one)
	batched int   // datagrams prepared into this batch

	msg stun.Message
	mac *engine.HMAC // SHA-256 scratch for derivations, verifies, signatures
	// peerPads: the pad states of the other side's capability while its
	// INTRODUCE is signed (introduce clears them).
	peerPads engine.HMACKey
	reqs     []request   // parallel to ops
	ops      []engine.Op // cap: the most datagrams of a batch
	out      []packet    // that many × answersPerRequest write slots
	nout     int
	stats    batchStats

	punch *punchMetrics // the tenants' punch outcome series
	// marks queues the attempts a presence answer names, for markLoop to
	// mark offered (nil: not marked).
	marks chan<- engine.Handle
}

// newProcessor makes a processor for batches of at most capacity datagrams.
func newProcessor(store engine.Store, keys *engine.Keyring, limiter *rateLimiter, capacity int) *processor {
	hosts, _ := store.(engine.HostResolver)
	return &processor{
		hosts: hosts,
		store: store, keys: keys, limiter: limiter, mac: engine.NewHMAC(),
		reqs: make([]request, 0, capacity),
		ops:  make([]engine.Op, 0, capacity),
		out:  newPackets(capacity*answersPerRequest, writeSlot),
	}
}

// run processes in (at most the processor's capacity of datagrams) at monotonic time nowNS and
// returns the answers to send. The returned packets alias the processor's
// write slots and are valid until the next run.
func (p *processor) run(in []packet, nowNS int64) []packet {
	p.prepare(in, nowNS)
	return p.apply()
}

// prepare is run's first half: parse and authenticate in, encode the
// answers that need no store, and collect the verified requests as ops. It
// reads in only until it returns.
func (p *processor) prepare(in []packet, nowNS int64) {
	p.nout, p.batched = 0, 0
	p.reqs, p.ops = p.reqs[:0], p.ops[:0]
	p.prepareMore(in, nowNS)
}

// prepareMore adds in to the batch prepare began (the datagrams a top-up
// read, see overlapLoop), as if prepare had been given both at once.
func (p *processor) prepareMore(in []packet, nowNS int64) {
	if p.batched+len(in) > cap(p.reqs) {
		panic("BUG: processor given more datagrams than its capacity")
	}
	p.batched += len(in)
	p.nowNS = nowNS
	p.stats.in += len(in)
	for i := range in {
		p.handle(&in[i])
	}
}

// apply is run's second half: commit the prepared ops with one
// store.ApplyBatch and encode their answers; it returns every answer of the
// batch.
func (p *processor) apply() []packet {
	if len(p.ops) > 0 {
		start := time.Now()
		err := p.store.ApplyBatch(context.Background(), p.ops)
		p.stats.commit += time.Since(start)
		if err != nil {
			// Only a cancelled context fails a whole batch; ours never is.
			p.stats.drops[dropStore] += len(p.ops)
		} else {
			for i := range p.ops {
				p.answer(&p.reqs[i], &p.ops[i])
			}
		}
	}
	// Capabilities and their pad states live for one batch only: clear the
	// requests and the one slot past them that refused requests were
	// authenticated in.
	clear(p.reqs[:min(len(p.reqs)+1, cap(p.reqs))])
	return p.out[:p.nout]
}

// handle parses and authenticates one datagram. Answers that need no store
// (plain Binding, 401, 420, 400) are encoded at once; verified presence and
// bind requests become ops.
func (p *processor) handle(pk *packet) {
	if pk.trunc || len(pk.buf) > stun.MaxDatagram {
		p.stats.drops[dropOversize]++
		return
	}
	m := &p.msg
	if stun.Parse(pk.buf, m) != nil {
		p.stats.drops[dropMalformed]++
		return
	}
	if m.Type() != stun.BindingRequest {
		p.stats.drops[dropUnsupported]++
		return
	}
	name, hasUser := m.Username()
	if !hasUser {
		if len(m.Unknown()) > 0 {
			p.unsignedError(pk, methodBinding, stun.CodeUnknownAttribute)
			return
		}
		p.plainBinding(pk)
		return
	}
	// The request is built in place in the next free slot of p.reqs, which
	// only grows over it once the request becomes an op.
	req := &p.reqs[:len(p.reqs)+1][len(p.reqs)]
	switch p.authenticate(name, req) {
	case authOK:
	case authUnreachable:
		p.stats.drops[dropStore]++
		return
	default:
		p.unsignedError(pk, methodOfName(name), stun.CodeUnauthorized)
		return
	}
	req.src, req.local, req.txID, req.size = pk.addr, pk.local, m.TransactionID(), len(pk.buf)
	kind, h := req.kind, req.handle
	req.report = kind != stun.KindPresence && m.Has(stun.AttrOutcome)
	req.relayed = false
	meth := req.method()
	if len(m.Unknown()) > 0 {
		p.signedError(req, meth, stun.CodeUnknownAttribute, m.Unknown())
		return
	}
	local, ok := m.XORAddress(stun.AttrLocalAddress)
	if !ok && m.Has(stun.AttrLocalAddress) {
		p.signedError(req, meth, stun.CodeBadRequest, nil)
		return
	}
	op := engine.Op{}
	fp := engine.FingerprintOf(&req.key)
	switch kind {
	case stun.KindPresence:
		seq, ok := m.Uint64(stun.AttrSequence)
		if !ok {
			p.signedError(req, meth, stun.CodeBadRequest, nil)
			return
		}
		op.Kind = engine.OpPresence
		op.Presence = engine.BindPresence{Handle: h, Key: fp, Seq: seq, Public: pk.addr, Local: local}
	default:
		role := engine.RoleClient
		if kind == stun.KindAttemptHost {
			role = engine.RoleHost
		}
		if req.report {
			path, millis, ok := m.Outcome()
			if !ok {
				p.signedError(req, meth, stun.CodeBadRequest, nil)
				return
			}
			op.Kind = engine.OpOutcome
			op.Report = engine.PunchReport{Handle: h, Role: role, Key: fp, Path: engine.Path(path), ConnectMillis: millis}
			break
		}
		relayed, ok := m.XORAddress(stun.AttrRelayedAddress)
		if !ok && m.Has(stun.AttrRelayedAddress) {
			p.signedError(req, meth, stun.CodeBadRequest, nil)
			return
		}
		if ok && p.relay != nil && !p.relay.permits(relayed) {
			// Never recorded, so never introduced to the other side.
			p.signedError(req, meth, stun.CodePeerRefused, nil)
			return
		}
		req.relayed = ok
		op.Kind = engine.OpBindAttempt
		op.Bind = engine.BindAttempt{Handle: h, Role: role, Key: fp, Public: pk.addr, Local: local, Relayed: relayed}
	}
	p.reqs = p.reqs[:len(p.reqs)+1]
	p.ops = append(p.ops, op)
}

func methodOf(kind byte) method {
	switch kind {
	case stun.KindPresence:
		return methodPresence
	case stun.KindAttemptHost:
		return methodBindHost
	}
	return methodBindClient
}

// methodOfName labels an unauthenticated request by its claimed kind.
func methodOfName(name []byte) method {
	if len(name) > 0 {
		switch name[0] {
		case stun.KindPresence, stun.KindAttemptHost, stun.KindAttemptClient:
			return methodOf(name[0])
		}
	}
	return methodBinding
}

// answer encodes the answer to a committed op.
func (p *processor) answer(r *request, op *engine.Op) {
	meth := r.method()
	if op.Err != nil {
		p.signedError(r, meth, stun.CodeBadRequest, nil)
		return
	}
	if !op.Result.OK() {
		if r.kind == stun.KindAttemptHost && hostKeyGone(op.Result) {
			// The h: key was derived from the attempt's listing before the
			// commit; the commit found that attempt gone, so at this instant
			// the key derives from nothing: the answer a request arriving now
			// gets, an unsigned 401 (docs/contracts/udp.md#authentication), not a signed 404.
			p.unsignedAnswer(r.src, r.local, r.txID, r.size, meth, stun.CodeUnauthorized, nil)
			return
		}
		code, _ := errorFor(op.Result.Outcome)
		p.signedError(r, meth, code, nil)
		return
	}
	switch op.Kind {
	case engine.OpPresence:
		p.presenceSuccess(r, &op.PresenceView)
	case engine.OpBindAttempt:
		p.bindSuccess(r, meth, op)
	case engine.OpOutcome:
		p.reportSuccess(r, meth, op)
	}
}

// hostKeyGone reports whether a host bind's commit result means the
// attempt no longer exists: NotFound (the attempt or its listing is gone; a
// verified host key cannot mismatch a live attempt, since both derive from
// the same presence handle) or ServiceUnavailable (which erased every
// attempt), but not an Unreachable one: a shared store that did not answer
// erased nothing, so the key still derives from the attempt and the answer
// is a signed 503. Store.BindAttemptEndpoint re-checks under its lock.
func hostKeyGone(r engine.Result) bool {
	return r.Outcome == engine.NotFound || r.Outcome == engine.ServiceUnavailable && !r.Unreachable
}

// slot returns the next write slot addressed to dst from local, or nil when
// every slot is taken (cannot happen: a request makes at most
// answersPerRequest answers).
func (p *processor) slot(dst netip.AddrPort, local netip.Addr) *packet {
	if p.nout == len(p.out) {
		return nil
	}
	s := &p.out[p.nout]
	s.buf = s.buf[:0]
	s.addr, s.local, s.trunc = dst, local, false
	return s
}

// commit keeps the slot's message if it was built and fits max bytes.
func (p *processor) commit(s *packet, b *stun.Builder, max int) bool {
	msg := b.Bytes()
	if msg == nil || len(msg) > max {
		p.stats.drops[dropSizeBound]++
		return false
	}
	s.buf = msg
	p.nout++
	return true
}
