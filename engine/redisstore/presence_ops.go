package redisstore

import (
	"context"
	"errors"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// BindHostPresence is the host's heartbeat: a whole-endpoint replacement
// with a new deadline, accepted only with Seq above the last accepted one.
func (s *Store) BindHostPresence(ctx context.Context, cmd engine.BindPresence) (engine.PresenceView, engine.Result, error) {
	if err := engine.ValidatePresence(&cmd); err != nil {
		return engine.PresenceView{}, engine.Result{}, err
	}
	field := string(append(cmd.Handle.UUID.AppendText(nil), cmd.Key[:]...))
	for range refTries {
		ref := s.refs.next()
		b, seqLen := appendPresenceValue(nil, cmd.Seq, &ref, cmd.Public, cmd.Local)
		value := string(b)
		var a [bpArgs]string
		a[bpInstance], a[bpRef], a[bpField], a[bpSeq], a[bpValue] = s.idArg, string(ref[:]), field, value[:seqLen], value
		m, ok, err := s.call(ctx, "rdv_bind_presence", a[:]...)
		if err != nil {
			return engine.PresenceView{}, engine.Result{}, err
		}
		code, r, rest := reply(m, ok)
		if code != codeRetry {
			return s.presenceResult(r, rest)
		}
		s.refs.move() // another live call holds the reference; nothing was written
	}
	return engine.PresenceView{}, unreachable, nil
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

// PresenceInstance is the instance a listing's presence last reached (zero
// before its first refresh or when the listing is gone): what the
// listing's view names, read without its tenant, so an operator or a test
// of several instances can see where a host's heartbeats land.
func (s *Store) PresenceInstance(ctx context.Context, id engine.ListingID) (engine.UUID, error) {
	m, ok, err := s.call(ctx, "rdv_presence_instance", uuidArg(id.UUID))
	if err != nil {
		return engine.UUID{}, err
	}
	inst, err := m.ToString()
	if !ok || err != nil {
		return engine.UUID{}, errors.New("redisstore: Redis did not answer the presence instance")
	}
	return parseID(inst), nil
}
