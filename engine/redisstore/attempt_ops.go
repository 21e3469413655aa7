package redisstore

import (
	"context"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// An attempt lives in the hash "a:<id>", its deadline in "aexp"; "ah" maps
// handles to attempts, "la:<listing>" lists a listing's attempts (the
// cascade) and "lp:<listing>" those whose host endpoint is unbound (the
// pending offers), both in creation order; "ca:<client>" is the client's set.

func roleArg(r engine.Role) string {
	if r == engine.RoleHost {
		return "h"
	}
	return "c"
}

// BindAttemptEndpoint binds one role's endpoint: the first binding per role
// wins; the identical one again is a Replay; another is ReplayRejected. A
// relayed address is recorded by the same rule, apart from the endpoint;
// only ApplyBatch consumes the relay introduction.
func (s *Store) BindAttemptEndpoint(ctx context.Context, cmd engine.BindAttempt) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateBind(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	var a [baArgs]string
	a[baHandle], a[baRole], a[baKey] = uuidArg(cmd.Handle.UUID), roleArg(cmd.Role), fpArg(&cmd.Key)
	a[baBinding], a[baInstance], a[baRelayed] = bindingArg(cmd.Public, cmd.Local), s.idArg, endpointArg(cmd.Relayed)
	m, ok, err := s.call(ctx, "rdv_bind_attempt", a[:]...)
	if err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	return s.attemptResult(r, rest)
}

// attemptResult completes a result whose rest may be {replay, view}.
func (s *Store) attemptResult(r engine.Result, rest []rueidis.RedisMessage) (engine.AttemptView, engine.Result, error) {
	if len(rest) < 2 {
		return engine.AttemptView{}, r, nil
	}
	v, ok := s.attemptView(rest[1])
	if !ok {
		return engine.AttemptView{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	r.Replay = replayFlag(rest)
	return v, r, nil
}

func (s *Store) ConsumeIntroduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	return s.introductionCall(ctx, "rdv_consume_introduction", h)
}

func (s *Store) Introduction(ctx context.Context, h engine.Handle) (engine.Introduction, engine.Result, error) {
	return s.introductionCall(ctx, "rdv_introduction", h)
}

func (s *Store) introductionCall(ctx context.Context, fn string, h engine.Handle) (engine.Introduction, engine.Result, error) {
	m, ok, err := s.call(ctx, fn, uuidArg(h.UUID))
	if err != nil {
		return engine.Introduction{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if len(rest) < 2 {
		return engine.Introduction{}, r, nil
	}
	in, iok := introduction(rest[1])
	if !iok {
		return engine.Introduction{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	return in, r, nil
}

// AttemptHost is a read without cleanup: the function treats anything past
// its deadline as gone. A handle without this deployment's tag
// (newAttemptHandle) is answered at once, without Redis. False also when
// Redis does not answer.
func (s *Store) AttemptHost(h engine.Handle) (engine.Handle, bool) {
	p, ok, _ := s.ResolveAttemptHost(h)
	return p, ok
}

// ResolveAttemptHost is AttemptHost, telling an attempt Redis says is gone
// (reached) from one Redis did not answer for (engine.HostResolver).
func (s *Store) ResolveAttemptHost(h engine.Handle) (presence engine.Handle, ok, reached bool) {
	if !s.attemptHandleTagged(h) {
		return engine.Handle{}, false, true // made up: no call needed to know
	}
	m, ok, _ := s.call(context.Background(), "rdv_attempt_host", uuidArg(h.UUID))
	if !ok {
		return engine.Handle{}, false, false
	}
	p := str(m)
	if p == "" {
		return engine.Handle{}, false, true
	}
	u, valid := engine.ParseUUID(p)
	return engine.Handle{UUID: u}, valid, true
}
