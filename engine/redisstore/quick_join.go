package redisstore

import (
	"context"
	"encoding/hex"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

var _ engine.QuickJoiner = (*Store)(nil)

// quickJoinCandidates is the most listings one quick join's call tries:
// the first the local index finds in the quick join's walk, at a version
// at least as new as what Redis held when the quick join began. The call
// checks each as it is then: one a renewal filled, or that went, since
// the index's sync is passed over for the next.
const quickJoinCandidates = 16

// QuickJoin is one small sync call (the local index brought to what Redis
// holds, as for a browse page), the walk of the query on the local index
// (memstore.QuickJoinWalk: not full, most players first) for at most
// quickJoinCandidates listings, then one call (quick_join.lua) that tries
// them in order with a join's checks and creates the attempt on the
// first that passes. A replay answers the attempt first created, whatever
// the index finds now: the call checks the idempotency record first.
func (s *Store) QuickJoin(ctx context.Context, cmd engine.QuickJoin) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateQuickJoin(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	if s.reg.draining.Load() {
		return engine.AttemptView{}, instanceDraining, nil
	}
	if r, err := s.browseFresh(ctx); err != nil || r.Outcome != engine.Success {
		return engine.AttemptView{}, r, err
	}
	var buf [quickJoinCandidates]engine.UUID
	m := &s.mirror
	m.mu.RLock()
	ids := m.idx.quickJoin(&cmd.Query, m.ver, buf[:0])
	m.mu.RUnlock()

	j := &cmd.Join
	n := len(ids)
	a := make([]string, qjArgs+3*n)
	a[qjTenant], a[qjClient] = tenantArg(j.Tenant), string(j.Client)
	a[qjIdem] = packKey('q', j.Tenant.Game, j.Tenant.Env, string(j.Client), j.IdempotencyKey)
	fp := cmd.Hash()
	a[qjRequest], a[qjProtocol] = hex.EncodeToString(fp[:]), strconv.FormatUint(uint64(j.ProtocolVersion), 10)
	a[qjRelayOnly], a[qjCount] = flagArg(j.RelayOnly), strconv.Itoa(n)
	var caps [quickJoinCandidates]engine.Capability
	for k, id := range ids {
		pres := s.presenceHandle(engine.ListingID{UUID: id})
		a[qjArgs+k], a[qjArgs+n+k] = uuidArg(id), uuidArg(pres.UUID)
		caps[k] = s.keys.Presence(pres)
	}
	for {
		id, handle := engine.AttemptID{UUID: engine.NewUUID()}, s.newAttemptHandle()
		cc := s.keys.AttemptClient(handle)
		ck := engine.FingerprintOf(&cc)
		a[qjAttempt], a[qjHandle], a[qjClientKey] = uuidArg(id.UUID), uuidArg(handle.UUID), fpArg(&ck)
		for k := range ids {
			hc := engine.HostAttemptCapability(&caps[k], handle)
			hk := engine.FingerprintOf(&hc)
			a[qjArgs+2*n+k] = fpArg(&hk)
		}
		m, ok, nr, err := s.callAcked(ctx, "rdv_quick_join", a...)
		if err != nil || nr {
			return engine.AttemptView{}, unconfirmed(nr), err
		}
		code, r, rest := reply(m, ok)
		if code == codeRetry {
			continue // an ID collided (astronomically unlikely); nothing was written
		}
		return s.attemptResult(r, rest)
	}
}
