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
// sent as arguments of it (scripts/apply_batch.lua), an invalid one gets
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
	buf.reset(len(ops), s.refs.next())
	s.listings.mu.RLock()
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case engine.OpPresence:
			if buf.errs[i] = engine.ValidatePresence(&op.Presence); buf.errs[i] == nil {
				id, known := s.listings.m[op.Presence.Handle.UUID]
				buf.addPresence(&op.Presence, id, known)
				buf.sent, buf.known, buf.ids = append(buf.sent, i), append(buf.known, known), append(buf.ids, id)
			}
		case engine.OpBindAttempt:
			if buf.errs[i] = engine.ValidateBind(&op.Bind); buf.errs[i] == nil {
				buf.addBind(&op.Bind)
				buf.sent, buf.known, buf.ids = append(buf.sent, i), append(buf.known, true), append(buf.ids, engine.ListingID{})
			}
		case engine.OpOutcome:
			if buf.errs[i] = engine.ValidateReport(&op.Report); buf.errs[i] == nil {
				buf.addReport(&op.Report)
				buf.sent, buf.known, buf.ids = append(buf.sent, i), append(buf.known, true), append(buf.ids, engine.ListingID{})
			}
		default:
			buf.errs[i] = &engine.InputError{Field: "kind", Reason: "must be OpPresence, OpBindAttempt or OpOutcome"}
		}
	}
	s.listings.mu.RUnlock()
	var m rueidis.RedisMessage
	ok := true
	if len(buf.sent) > 0 {
		args := buf.cut(s.idArg)
		for tries := 1; ; tries++ {
			var err error
			m, ok, err = s.call(ctx, "rdv_apply_batch", args...)
			if err != nil {
				batchBufs.Put(buf) // nothing was sent
				return err
			}
			if !ok || !retried(m) || tries == refTries {
				break
			}
			// Another live call holds the reference (nothing was
			// written): draw another prefix and send the batch again.
			s.refs.move()
			buf.setRef(s.refs.next())
		}
	}
	for i := range ops {
		clearAnswer(&ops[i], engine.Result{}, buf.errs[i])
	}
	if ok && s.batchAnswers(m, ops, buf) {
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

// batchBuf holds one ApplyBatch call's arguments and bookkeeping.
type batchBuf struct {
	// The arguments' bytes follow each other in data; cut makes strings of
	// them once data is complete (strings into a buffer that may still
	// grow would go stale).
	data     []byte
	ref      [prRefLen]byte // the call's reference, which every refresh's value carries
	refAt    int            // where the reference argument is in data
	refresh  [][3]span      // per refresh: record field (or handle and fingerprint), sequence, value
	byHandle []byte         // per refresh: 'p' (names its record) or 'h' (its handle)
	handles  bool           // some refresh names its handle
	named    []engine.UUID  // per refresh: the listing ID or handle it names
	others   []other        // binds and outcome reports
	args     []string
	sent     []int              // indexes of the ops sent, in order
	known    []bool             // per op sent: its listing was named (or it is a bind)
	ids      []engine.ListingID // per op sent: the listing it named
	errs     []error            // each op's InputError
}

// span is where an argument is in batchBuf.data.
type span struct{ from, to int }

// other is a bind's or an outcome report's arguments: the number of
// refreshes before it, its kind ('b' or 'o'), the attempt's handle, key,
// role and two more (a bind's binding and relayed address, a report's path
// and milliseconds).
type other [7]span

var batchBufs = sync.Pool{New: func() any { return new(batchBuf) }}

func (b *batchBuf) reset(n int, ref [prRefLen]byte) {
	b.ref = ref
	b.data, b.refresh, b.byHandle, b.handles, b.others = b.data[:0], b.refresh[:0], b.byHandle[:0], false, b.others[:0]
	b.named = b.named[:0]
	b.args, b.sent, b.known, b.ids = b.args[:0], b.sent[:0], b.known[:0], b.ids[:0]
	if cap(b.errs) < n {
		b.errs = make([]error, n)
	}
	b.errs = b.errs[:n]
}

// since is the span from at to the end of data.
func (b *batchBuf) since(at int) span { return span{at, len(b.data)} }

// addPresence adds a refresh as apply_batch.lua reads it: by its record's
// field when the listing is known, else by its handle (text) and key.
func (b *batchBuf) addPresence(p *engine.BindPresence, id engine.ListingID, known bool) {
	var f [3]span
	at := len(b.data)
	if known {
		b.byHandle = append(b.byHandle, 'p')
		b.data = appendPresenceField(b.data, id.UUID, &p.Key)
		b.named = append(b.named, id.UUID)
	} else {
		b.byHandle, b.handles = append(b.byHandle, 'h'), true
		b.data = append(p.Handle.UUID.AppendText(b.data), p.Key[:]...)
		b.named = append(b.named, p.Handle.UUID)
	}
	f[0], at = b.since(at), len(b.data)
	var seqLen int
	b.data, seqLen = appendPresenceValue(b.data, p.Seq, &b.ref, p.Public, p.Local)
	f[1], f[2] = span{at, at + seqLen}, b.since(at) // the sequence leads the value
	b.refresh = append(b.refresh, f)
}

// setRef puts ref in place of the call's reference, in its argument and
// in every refresh's value. The arguments' strings share data, so they
// change with it: only once the call that sent them has answered.
func (b *batchBuf) setRef(ref [prRefLen]byte) {
	b.ref = ref
	copy(b.data[b.refAt:], ref[:])
	for _, f := range b.refresh {
		copy(b.data[f[1].to:], ref[:]) // after the sequence
	}
}

// addBind adds a bind as apply_batch.lua reads it, after the refreshes
// added so far.
func (b *batchBuf) addBind(a *engine.BindAttempt) {
	f := b.startOther('b', a.Handle, &a.Key, a.Role)
	at := len(b.data)
	b.data = appendEndpoint(b.data, a.Public)
	b.data = appendEndpoint(append(b.data, '|'), a.Local)
	f[5], at = b.since(at), len(b.data)
	b.data = appendEndpoint(b.data, a.Relayed)
	f[6] = b.since(at)
	b.others = append(b.others, f)
}

// startOther appends what a bind and an outcome report begin with: the
// number of refreshes before it, its kind, the attempt's handle, the key
// and the role.
func (b *batchBuf) startOther(kind byte, h engine.Handle, key *engine.Fingerprint, role engine.Role) (f other) {
	at := len(b.data)
	b.data = strconv.AppendInt(b.data, int64(len(b.refresh)), 10)
	f[0], at = b.since(at), len(b.data)
	b.data = append(b.data, kind)
	f[1], at = b.since(at), len(b.data)
	b.data = h.UUID.AppendText(b.data)
	f[2], at = b.since(at), len(b.data)
	b.data = append(b.data, key[:]...)
	f[3], at = b.since(at), len(b.data)
	b.data = append(b.data, roleArg(role)...)
	f[4] = b.since(at)
	return f
}

// cut answers the arguments in apply_batch.lua's order (ARG.apply_batch,
// then the refreshes' and the other ops'): strings sharing data's memory (no copy, no allocation per
// op).
func (b *batchBuf) cut(instance string) []string {
	b.refAt = len(b.data)
	b.data = append(b.data, b.ref[:]...)
	ref := b.since(b.refAt)
	at := len(b.data)
	b.data = strconv.AppendInt(b.data, int64(len(b.refresh)), 10)
	count := b.since(at)
	if b.handles || namesTwice(b.named) {
		b.data = append(b.data, b.byHandle...)
	}
	kinds := b.since(count.to)
	all := rueidis.BinaryString(b.data)
	arg := func(s span) string { return all[s.from:s.to] }
	var head [abArgs]string
	head[abInstance], head[abRef], head[abCount], head[abKinds] = instance, arg(ref), arg(count), arg(kinds)
	b.args = append(b.args, head[:]...)
	for j := range 3 {
		for _, f := range b.refresh {
			b.args = append(b.args, arg(f[j]))
		}
	}
	for _, f := range b.others {
		for _, s := range f {
			b.args = append(b.args, arg(s))
		}
	}
	return b.args
}

// appendEndpoint appends endpointArg(a).
func appendEndpoint(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return b
	}
	return a.AppendTo(b)
}

// refTries bounds the sends of one batch whose reference another live
// call holds: each retry draws a new random prefix, so a second collision
// is as unlikely as the first.
const refTries = 3

// retried reports whether the script answered RETRY (codeRetry): the
// batch's reference names a live entry, and nothing was written.
func retried(m rueidis.RedisMessage) bool {
	if !m.IsInt64() { // asked first: AsInt64's error for a batch's answer allocates
		return false
	}
	n, err := m.AsInt64()
	return err == nil && n == codeRetry
}

// batchAnswers decodes apply_batch.lua's {presence, others, offered} into
// the sent ops; false if the reply is not one.
func (s *Store) batchAnswers(m rueidis.RedisMessage, ops []engine.Op, b *batchBuf) bool {
	a, err := m.ToArray()
	if err != nil || len(a) != 3 {
		return false
	}
	var parts [3]string
	for i := range parts {
		if parts[i], err = a[i].ToString(); err != nil {
			return false
		}
	}
	pres, others, offered := parts[0], parts[1], parts[2]
	ttl := s.duration(int64(s.lim.PresenceTTL / s.tick))
	k := 0 // the refresh's number in the call
	for j, i := range b.sent {
		op := &ops[i]
		if op.Kind == engine.OpPresence {
			k++
			var ok bool
			switch {
			case answers(pres, k):
				pres, ok = decodePresence(pres[4:], op, b.known[j], b.ids[j], ttl)
			case answers(offered, k):
				// Decided inline: accepted, with pending offers.
				op.PresenceView.Listing, op.PresenceView.TTL = b.ids[j], ttl
				offered, ok = decodeOffered(offered[4:], &op.PresenceView)
			default:
				// Decided inline: accepted, no pending offers.
				op.PresenceView.Listing, op.PresenceView.TTL, ok = b.ids[j], ttl, true
			}
			if !ok {
				return false
			}
			continue
		}
		var ok bool
		if op.Kind == engine.OpOutcome {
			others, ok = s.decodeReport(others, op)
		} else {
			others, ok = s.decodeBind(others, op)
		}
		if !ok {
			return false
		}
	}
	return len(pres) == 0 && len(others) == 0 && len(offered) == 0
}

// answers reports whether packed answers p begin with refresh k's.
func answers(p string, k int) bool {
	return len(p) >= 4 && int(p[0])<<24|int(p[1])<<16|int(p[2])<<8|int(p[3]) == k
}

// decodePresence reads one presence answer after its refresh's number
// from the front of p (see apply_batch.lua) and returns the rest. known
// says the refresh named its listing, id.
func decodePresence(p string, op *engine.Op, known bool, id engine.ListingID, ttl time.Duration) (string, bool) {
	if len(p) < 2 {
		return p, false
	}
	op.Result = engine.Result{Outcome: engine.Outcome(p[0]), Pool: engine.Pool(p[1])}
	if op.Result.Outcome != engine.Success {
		return p[2:], true
	}
	if len(p) < 3 {
		return p, false
	}
	n := int(p[2])
	p = p[3:]
	if !known {
		u, ok := engine.ParseUUID(p[:min(len(p), 36)])
		if !ok {
			return p, false
		}
		id, p = engine.ListingID{UUID: u}, p[36:]
	}
	op.PresenceView.Listing, op.PresenceView.TTL = id, ttl
	return decodeHandles(p, n, &op.PresenceView)
}

// decodeOffered reads the pending offers of a refresh decided inline (see
// offeredAnswer in apply_batch.lua) from the front of p into v and
// returns the rest.
func decodeOffered(p string, v *engine.PresenceView) (string, bool) {
	if len(p) < 1 {
		return p, false
	}
	return decodeHandles(p[1:], int(p[0]), v)
}

// decodeHandles reads n pending offers' handles (36 each) from the front
// of p into v and returns the rest.
func decodeHandles(p string, n int, v *engine.PresenceView) (string, bool) {
	if len(p) < 36*n {
		return p, false
	}
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

// decodeBind reads one bind answer from the front of p (see
// apply_batch.lua) into op and returns the rest.
func (s *Store) decodeBind(p string, op *engine.Op) (string, bool) {
	p, viewed, ok := answerHead(p, op)
	if !ok || !viewed {
		return p, ok
	}
	if len(p) < 3 {
		return p, false
	}
	op.Result.Replay, op.IntroReady, op.FirstIntro = p[0] == 1, p[1] == 1, p[2] == 1
	var view attemptFields
	if p, ok = packedFields(p[3:], view[:]); !ok {
		return p, false
	}
	op.Attempt = s.attemptViewOf(&view)
	if op.IntroReady {
		var intro introductionFields
		if p, ok = packedFields(p, intro[:]); !ok {
			return p, false
		}
		op.Intro = introductionOf(&intro)
	}
	if len(p) < 2 {
		return p, false
	}
	op.RelayReady, op.FirstRelay = p[0] == 1, p[1] == 1
	p = p[2:]
	if op.RelayReady {
		var intro introductionFields
		if p, ok = packedFields(p, intro[:]); !ok {
			return p, false
		}
		op.RelayIntro = relayIntroductionOf(&intro)
	}
	return p, true
}

// answerHead reads the outcome and pool that lead a bind's or an outcome
// report's answer into op, and whether an attempt view follows.
func answerHead(p string, op *engine.Op) (rest string, viewed, ok bool) {
	if len(p) < 3 {
		return p, false, false
	}
	op.Result = engine.Result{Outcome: engine.Outcome(p[0]), Pool: engine.Pool(p[1])}
	return p[3:], p[2] == 1, true
}

// namesTwice reports whether some listing ID or handle is named twice, in
// which case apply_batch.lua decides every refresh in order against what
// the earlier ones wrote. Without allocating: open addressing over 256
// slots, so a batch of more than 128 refreshes counts as naming twice.
func namesTwice(named []engine.UUID) bool {
	if len(named) > 128 {
		return true
	}
	var slots [256]uint8 // 1 + the index into named; 0 is empty
	for i := range named {
		u := &named[i]
		h := (binary.LittleEndian.Uint64(u[:8]) ^ binary.LittleEndian.Uint64(u[8:])) * 0x9e3779b97f4a7c15
		for s := uint8(h >> 56); ; s++ {
			if slots[s] == 0 {
				slots[s] = uint8(i + 1)
				break
			}
			if named[slots[s]-1] == *u {
				return true
			}
		}
	}
	return false
}
