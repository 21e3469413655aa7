package redisstore

import (
	"context"
	"encoding/binary"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// ApplyBatch commits one UDP read batch in one call: every valid op is
// packed into one argument (scripts/apply_batch.lua), an invalid one gets
// its InputError here and is not sent. If Redis does not answer, every sent
// op is ServiceUnavailable.
//
// The batch's buffers are reused, so the allocations of a call (the
// client's command and reply, the deadline's context) are a fixed number
// per batch, none per op (TestApplyBatchAllocatesPerBatchNotPerOp).
func (s *Store) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := batchBufs.Get().(*batchBuf)
	buf.reset(len(ops))
	s.listings.mu.RLock()
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case engine.OpPresence:
			if buf.errs[i] = engine.ValidatePresence(&op.Presence); buf.errs[i] == nil {
				id, known := s.listings.m[op.Presence.Handle.UUID]
				buf.args = appendPresence(buf.args, &op.Presence, id, known)
				buf.sent, buf.known = append(buf.sent, i), append(buf.known, known)
			}
		case engine.OpBindAttempt:
			if buf.errs[i] = engine.ValidateBind(&op.Bind); buf.errs[i] == nil {
				buf.args = appendBind(buf.args, &op.Bind)
				buf.sent, buf.known = append(buf.sent, i), append(buf.known, true)
			}
		case engine.OpOutcome:
			if buf.errs[i] = engine.ValidateReport(&op.Report); buf.errs[i] == nil {
				buf.args = appendReport(buf.args, &op.Report)
				buf.sent, buf.known = append(buf.sent, i), append(buf.known, true)
			}
		default:
			buf.errs[i] = &engine.InputError{Field: "kind", Reason: "must be OpPresence, OpBindAttempt or OpOutcome"}
		}
	}
	s.listings.mu.RUnlock()
	var m rueidis.RedisMessage
	ok := true
	if len(buf.sent) > 0 {
		var err error
		m, ok, err = s.call(ctx, "rdv_apply_batch", rueidis.BinaryString(buf.args))
		if err != nil {
			batchBufs.Put(buf) // nothing was sent
			return err
		}
	}
	for i := range ops {
		clearAnswer(&ops[i], engine.Result{}, buf.errs[i])
	}
	if ok && s.batchAnswers(m, ops, buf.sent) {
		s.listings.learn(ops, buf.sent, buf.known)
		batchBufs.Put(buf)
		return nil
	}
	// Redis did not answer, or answered what is not a batch reply: as
	// reply() says, unreachable (nothing was erased).
	for _, i := range buf.sent {
		clearAnswer(&ops[i], unreachable, nil)
	}
	if ok {
		batchBufs.Put(buf)
	}
	// Else Redis did not answer in time: the client may still hold the
	// argument (a command not yet written), so the buffer is not reused.
	return nil
}

// clearAnswer sets op's result and error, with no view or introduction.
func clearAnswer(op *engine.Op, r engine.Result, err error) {
	op.Result, op.Err = r, err
	op.PresenceView, op.Attempt, op.Intro, op.RelayIntro = engine.PresenceView{}, engine.AttemptView{}, engine.Introduction{}, engine.RelayIntroduction{}
	op.IntroReady, op.FirstIntro, op.RelayReady, op.FirstRelay, op.Duplicate, op.Tenant = false, false, false, false, false, engine.Tenant{}
}

// batchBuf holds one ApplyBatch call's packed argument and bookkeeping.
type batchBuf struct {
	args  []byte
	sent  []int   // indexes of the ops sent, in order
	known []bool  // per op sent: its listing was named (or it is a bind)
	errs  []error // each op's InputError
}

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

func (b *batchBuf) reset(n int) {
	b.args, b.sent, b.known = b.args[:0], b.sent[:0], b.known[:0]
	if cap(b.errs) < n {
		b.errs = make([]error, n)
	}
	b.errs = b.errs[:n]
}

// appendPresence packs a refresh as apply_batch.lua reads it, with its
// listing's ID when known.
func appendPresence(b []byte, p *engine.BindPresence, id engine.ListingID, known bool) []byte {
	b = append(b, 'p')
	b = p.Handle.UUID.AppendText(b)
	b = append(b, p.Key[:]...)
	at := len(b)
	b = strconv.AppendUint(append(b, 0, 0), p.Seq, 10)
	b = sized(b, at)
	at = len(b)
	b = sized(appendEndpoint(append(b, 0, 0), p.Public), at)
	at = len(b)
	b = sized(appendEndpoint(append(b, 0, 0), p.Local), at)
	if !known {
		return append(b, 0, 0)
	}
	return id.UUID.AppendText(append(b, 0, 36))
}

// appendBind packs a bind as apply_batch.lua reads it: 'b', or 'r' with
// the relayed address after the binding.
func appendBind(b []byte, a *engine.BindAttempt) []byte {
	relayed := a.Relayed.IsValid()
	if relayed {
		b = append(b, 'r')
	} else {
		b = append(b, 'b')
	}
	b = a.Handle.UUID.AppendText(b)
	b = append(b, a.Key[:]...)
	b = append(b, roleArg(a.Role)...)
	at := len(b)
	b = appendEndpoint(append(b, 0, 0), a.Public)
	b = append(b, '|')
	b = sized(appendEndpoint(b, a.Local), at)
	if relayed {
		at = len(b)
		b = sized(appendEndpoint(append(b, 0, 0), a.Relayed), at)
	}
	return b
}

// sized writes the length of what follows the two bytes at b[at:].
func sized(b []byte, at int) []byte {
	binary.BigEndian.PutUint16(b[at:], uint16(len(b)-at-2))
	return b
}

// appendEndpoint appends endpointArg(a).
func appendEndpoint(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return b
	}
	return a.AppendTo(b)
}

// batchAnswers decodes apply_batch.lua's {presence, binds} into the sent
// ops; false if the reply is not one.
func (s *Store) batchAnswers(m rueidis.RedisMessage, ops []engine.Op, sent []int) bool {
	a, err := m.ToArray()
	if err != nil || len(a) != 2 {
		return false
	}
	pres, err := a[0].ToString()
	if err != nil {
		return false
	}
	binds, err := a[1].ToArray()
	if err != nil {
		return false
	}
	ttl := s.duration(int64(s.lim.PresenceTTL / s.tick))
	for _, i := range sent {
		op := &ops[i]
		if op.Kind == engine.OpPresence {
			var ok bool
			if pres, ok = decodePresence(pres, op, ttl); !ok {
				return false
			}
			continue
		}
		if len(binds) == 0 {
			return false
		}
		if op.Kind == engine.OpOutcome {
			s.decodeReport(binds[0], op)
		} else {
			s.decodeBind(binds[0], op)
		}
		binds = binds[1:]
	}
	return len(pres) == 0 && len(binds) == 0
}

// decodePresence reads one presence answer from the front of p (see
// apply_batch.lua) and returns the rest.
func decodePresence(p string, op *engine.Op, ttl time.Duration) (string, bool) {
	if len(p) < 2 {
		return p, false
	}
	op.Result = engine.Result{Outcome: engine.Outcome(p[0]), Pool: engine.Pool(p[1])}
	if op.Result.Outcome != engine.Success {
		return p[2:], true
	}
	if len(p) < 2+36+1 {
		return p, false
	}
	id, ok := engine.ParseUUID(p[2:38])
	n := int(p[38])
	p = p[39:]
	if !ok || len(p) < 36*n {
		return p, false
	}
	v := &op.PresenceView
	v.Listing, v.TTL = engine.ListingID{UUID: id}, ttl
	for k := range n {
		h, ok := engine.ParseUUID(p[36*k : 36*k+36])
		if !ok {
			return p, false
		}
		if v.NPending < engine.PendingOffersMax {
			v.Pending[v.NPending] = engine.Handle{UUID: h}
			v.NPending++
		}
	}
	return p[36*n:], true
}

// decodeBind reads one bind answer (see apply_batch.lua); one it cannot
// read answers ServiceUnavailable.
func (s *Store) decodeBind(m rueidis.RedisMessage, op *engine.Op) {
	_, r, rest := reply(m, true)
	op.Result = r
	if len(rest) < 5 {
		return
	}
	r.Replay = replayFlag(rest)
	op.Result = r
	op.IntroReady, op.FirstIntro = num(rest[1]) == 1, num(rest[2]) == 1
	var vok, iok, rok = true, true, true
	op.Attempt, vok = s.attemptView(rest[3])
	if op.IntroReady {
		op.Intro, iok = introduction(rest[4])
	}
	if len(rest) >= 8 {
		rok = decodeRelayIntro(rest[5:8], op)
	}
	if !vok || !iok || !rok {
		op.Result = engine.Result{Outcome: engine.ServiceUnavailable}
	}
}
