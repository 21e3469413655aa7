package redisstore

import (
	"encoding/binary"

	"github.com/redis/rueidis"
	"github.com/rendezvous/rendezvous/engine"
)

// The relay fallback's batch ops, packed and decoded as apply_batch.lua
// reads and answers them.

// appendReport packs an outcome report: 'o', handle, key, role, path (a
// byte), milliseconds (4 bytes).
func appendReport(b []byte, r *engine.PunchReport) []byte {
	b = append(b, 'o')
	b = r.Handle.UUID.AppendText(b)
	b = append(b, r.Key[:]...)
	b = append(b, roleArg(r.Role)...)
	b = append(b, byte(r.Path))
	return binary.BigEndian.AppendUint32(b, r.ConnectMillis)
}

// decodeReport reads an outcome report's answer {outcome, pool[, duplicate,
// tenant, attempt view]}.
func (s *Store) decodeReport(m rueidis.RedisMessage, op *engine.Op) {
	_, r, rest := reply(m, true)
	op.Result = r
	if !r.OK() {
		return
	}
	var ok bool
	if len(rest) == 3 {
		op.Attempt, ok = s.attemptView(rest[2])
	}
	if !ok {
		op.Result = engine.Result{Outcome: engine.ServiceUnavailable}
		return
	}
	op.Duplicate = num(rest[0]) == 1
	op.Tenant = parseTenant(str(rest[1]))
}

// decodeRelayIntro reads a bind answer's relay ready, first and relay
// introduction {id, handle, host relayed, client relayed}.
func decodeRelayIntro(f []rueidis.RedisMessage, op *engine.Op) bool {
	op.RelayReady, op.FirstRelay = num(f[0]) == 1, num(f[1]) == 1
	if !op.RelayReady {
		return true
	}
	in, err := f[2].ToArray()
	if err != nil || len(in) != 4 {
		return false
	}
	op.RelayIntro = engine.RelayIntroduction{
		Attempt: engine.AttemptID{UUID: parseID(str(in[0]))}, Handle: engine.Handle{UUID: parseID(str(in[1]))},
		Host: parseEndpoint(str(in[2])), Client: parseEndpoint(str(in[3])),
	}
	return true
}
