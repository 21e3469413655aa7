package redisstore

import (
	"context"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// BindHostPresence is the host's heartbeat: a whole-endpoint replacement
// with a new deadline, accepted only with Seq above the last accepted one.
func (s *Store) BindHostPresence(ctx context.Context, cmd engine.BindPresence) (engine.PresenceView, engine.Result, error) {
	if err := engine.ValidatePresence(&cmd); err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	m, ok, err := s.call(ctx, "rdv_bind_presence", append(presenceArgs(&cmd), s.idArg)...)
	if err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	return s.presenceResult(r, rest)
}

func presenceArgs(cmd *engine.BindPresence) []string {
	return []string{uuidArg(cmd.Handle.UUID), fpArg(&cmd.Key), string(appendSeq(nil, cmd.Seq)),
		endpointArg(cmd.Public), endpointArg(cmd.Local)}
}

// presenceResult completes a result whose rest may be {view}.
func (s *Store) presenceResult(r engine.Result, rest []rueidis.RedisMessage) (engine.PresenceView, engine.Result, error) {
	if len(rest) < 1 {
		return engine.PresenceView{}, r, nil
	}
	v, ok := s.presenceView(rest[0])
	if !ok {
		return engine.PresenceView{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	return v, r, nil
}
