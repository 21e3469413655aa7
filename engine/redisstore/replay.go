package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

// Replay tickets are the members of the sorted set "rexp", scored by
// deadline (consume_replay.lua).

// ConsumeReplay consumes a one-time ticket.
func (s *Store) ConsumeReplay(ctx context.Context, cmd engine.ConsumeReplay) (engine.Result, error) {
	life, err := engine.ValidateReplay(&cmd, s.lim.ReplayTTL)
	if err != nil {
		return engine.Result{}, err
	}
	m, ok, err := s.call(ctx, "rdv_consume_replay", packKey('r', cmd.Namespace, cmd.Key), strconv.FormatInt(int64(life/s.tick), 10))
	if err != nil {
		return engine.Result{}, err
	}
	_, r, _ := reply(m, ok)
	return r, nil
}
