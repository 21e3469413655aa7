package redisstore

import (
	"context"
	"strconv"

	"github.com/rendezvous/rendezvous/engine"
)

// CreateJoinAttempt authorises one client to be introduced to one listing's
// host: one call. The host's key derives from the listing's presence
// handle, which derives from the listing ID (presenceHandle), so both
// fingerprints are made here and stored by the same call.
func (s *Store) CreateJoinAttempt(ctx context.Context, cmd engine.CreateAttempt) (engine.AttemptView, engine.Result, error) {
	if err := engine.ValidateCreateAttempt(&cmd); err != nil {
		return engine.AttemptView{}, engine.Result{}, err
	}
	if s.reg.draining.Load() {
		return engine.AttemptView{}, instanceDraining, nil
	}
	ik := packKey('a', cmd.Tenant.Game, cmd.Tenant.Env, string(cmd.Client), cmd.IdempotencyKey)
	pres := s.presenceHandle(cmd.Listing)
	presCap := s.keys.Presence(pres)
	for {
		id, handle := engine.AttemptID{UUID: engine.NewUUID()}, s.newAttemptHandle()
		hc, cc := engine.HostAttemptCapability(&presCap, handle), s.keys.AttemptClient(handle)
		hk, ck := engine.FingerprintOf(&hc), engine.FingerprintOf(&cc)
		var a [caArgs]string
		a[caTenant], a[caClient], a[caIdem], a[caRequest] = tenantArg(cmd.Tenant), string(cmd.Client), ik, attemptRequest(&cmd)
		a[caListing], a[caProtocol] = uuidArg(cmd.Listing.UUID), strconv.FormatUint(uint64(cmd.ProtocolVersion), 10)
		a[caAttempt], a[caHandle], a[caPresence] = uuidArg(id.UUID), uuidArg(handle.UUID), uuidArg(pres.UUID)
		a[caHostKey], a[caClientKey], a[caRelayOnly] = fpArg(&hk), fpArg(&ck), flagArg(cmd.RelayOnly)
		m, ok, nr, err := s.callAcked(ctx, "rdv_create_attempt", a[:]...)
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
