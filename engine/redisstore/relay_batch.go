package redisstore

import (
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

// The relay fallback's parts of a batch, as apply_batch.lua reads and
// answers them.

// addReport adds an outcome report as apply_batch.lua reads it, after the
// refreshes added so far.
func (b *batchBuf) addReport(r *engine.PunchReport) {
	f := b.startOther('o', r.Handle, &r.Key, r.Role)
	at := len(b.data)
	b.data = strconv.AppendUint(b.data, uint64(r.Path), 10)
	f[5], at = b.since(at), len(b.data)
	b.data = strconv.AppendUint(b.data, uint64(r.ConnectMillis), 10)
	f[6] = b.since(at)
	b.others = append(b.others, f)
}

// decodeReport reads one outcome report's answer from the front of p (see
// apply_batch.lua) into op and returns the rest.
func (s *Store) decodeReport(p string, op *engine.Op) (string, bool) {
	p, viewed, ok := answerHead(p, op)
	if !ok || !viewed {
		return p, ok
	}
	if len(p) < 1 {
		return p, false
	}
	op.Duplicate = p[0] == 1
	var tenant [1]string
	var view attemptFields
	if p, ok = packedFields(p[1:], tenant[:]); ok {
		p, ok = packedFields(p, view[:])
	}
	if !ok {
		return p, false
	}
	op.Tenant, op.Attempt = parseTenant(tenant[0]), s.attemptViewOf(&view)
	return p, true
}

// relayIntroductionOf decodes prelude/90_attempt.lua's relay introduction {id,
// handle, host relayed, client relayed}.
func relayIntroductionOf(f *introductionFields) engine.RelayIntroduction {
	return engine.RelayIntroduction{
		Attempt: engine.AttemptID{UUID: parseID(f[0])}, Handle: engine.Handle{UUID: parseID(f[1])},
		Host: parseEndpoint(f[2]), Client: parseEndpoint(f[3]),
	}
}
