package redisstore

import (
	"context"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// ApplyBatch commits one UDP read batch in one call: every valid op is sent
// (six arguments each), an invalid one gets its InputError here and is not
// sent. If Redis does not answer, every sent op is ServiceUnavailable.
func (s *Store) ApplyBatch(ctx context.Context, ops []engine.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	args := make([]string, 0, 6*len(ops))
	sent := make([]int, 0, len(ops))
	errs := make([]error, len(ops))
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case engine.OpPresence:
			if errs[i] = engine.ValidatePresence(&op.Presence); errs[i] == nil {
				args = append(args, "p")
				args = append(args, presenceArgs(&op.Presence)...)
				sent = append(sent, i)
			}
		case engine.OpBindAttempt:
			b := &op.Bind
			if errs[i] = engine.ValidateBind(b); errs[i] == nil {
				args = append(args, "b", uuidArg(b.Handle.UUID), fpArg(&b.Key), roleArg(b.Role), bindingArg(b.Public, b.Local), "")
				sent = append(sent, i)
			}
		default:
			errs[i] = &engine.InputError{Field: "kind", Reason: "must be OpPresence or OpBindAttempt"}
		}
	}
	var answers []rueidis.RedisMessage
	ok := true
	if len(sent) > 0 {
		m, called, err := s.call(ctx, "rdv_apply_batch", args...)
		if err != nil {
			return err
		}
		a, aerr := m.ToArray()
		ok = called && aerr == nil && len(a) == len(sent)
		answers = a
	}
	for i := range ops {
		op := &ops[i]
		op.Result, op.Err = engine.Result{}, errs[i]
		op.PresenceView, op.Attempt, op.Intro = engine.PresenceView{}, engine.AttemptView{}, engine.Introduction{}
		op.IntroReady, op.FirstIntro = false, false
	}
	for j, i := range sent {
		op := &ops[i]
		if !ok {
			op.Result = unreachable
			continue
		}
		_, r, rest := reply(answers[j], true)
		if op.Kind == engine.OpPresence {
			op.PresenceView, op.Result, _ = s.presenceResult(r, rest)
			continue
		}
		op.Result = r
		if len(rest) < 5 {
			continue
		}
		r.Replay = replayFlag(rest)
		op.Result = r
		op.IntroReady, op.FirstIntro = num(rest[1]) == 1, num(rest[2]) == 1
		var vok, iok = true, true
		op.Attempt, vok = s.attemptView(rest[3])
		if op.IntroReady {
			op.Intro, iok = introduction(rest[4])
		}
		if !vok || !iok {
			op.Result = engine.Result{Outcome: engine.ServiceUnavailable}
		}
	}
	return nil
}
