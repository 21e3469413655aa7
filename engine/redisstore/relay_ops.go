package redisstore

import (
	"context"
	"strconv"
	"strings"

	"github.com/rendezvous/rendezvous/engine"
)

// The relay fallback's calls outside ApplyBatch (relay_batch.go has the
// batch ops): MarkOffered and AttemptStatus, one call each. Tombstones are
// written by the scripts (prelude/50_removal.lua) when an attempt goes.

func flagArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// MarkOffered records that the host was told of attempt h.
func (s *Store) MarkOffered(ctx context.Context, h engine.Handle) (engine.Result, error) {
	if !s.attemptHandleTagged(h) {
		if err := ctx.Err(); err != nil {
			return engine.Result{}, err
		}
		return engine.Result{Outcome: engine.NotFound}, nil // made up: no call needed to know
	}
	m, ok, err := s.call(ctx, "rdv_mark_offered", uuidArg(h.UUID))
	if err != nil {
		return engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	r.Replay = r.OK() && replayFlag(rest)
	return r, nil
}

// AttemptStatus answers the attempt's status to its client or its listing's
// owner, from the live record or its tombstone. The scripts return the
// progress flags; state and reason derive from them here, as MemStore's do.
func (s *Store) AttemptStatus(ctx context.Context, q engine.GetAttempt) (engine.AttemptStatus, engine.Result, error) {
	return s.attemptStatus(ctx, q, false)
}

// attemptStatus is AttemptStatus; with revocation, q.Subject is answered
// Revoked while it has a live revocation, global or confined to q.Tenant
// (AttemptStatusAs).
func (s *Store) attemptStatus(ctx context.Context, q engine.GetAttempt, revocation bool) (engine.AttemptStatus, engine.Result, error) {
	if err := engine.ValidateGetAttempt(&q); err != nil {
		return engine.AttemptStatus{}, engine.Result{}, err
	}
	var a [asArgs]string
	a[asTenant], a[asSubject], a[asAttempt] = tenantArg(q.Tenant), string(q.Subject), uuidArg(q.Attempt.UUID)
	a[asRevocation] = boolArg(revocation)
	if q.Attempt.IsZero() {
		if !s.attemptHandleTagged(q.Handle) {
			if err := ctx.Err(); err != nil {
				return engine.AttemptStatus{}, engine.Result{}, err
			}
			if revocation {
				// No attempt to read, but the caller's revocation comes first.
				return engine.AttemptStatus{}, s.revokedResult(ctx, q.Tenant, q.Subject), nil
			}
			return engine.AttemptStatus{}, engine.Result{Outcome: engine.NotFound}, nil // made up: no call needed to know
		}
		a[asAttempt], a[asHandle] = "", uuidArg(q.Handle.UUID)
	}
	m, ok, err := s.call(ctx, "rdv_attempt_status", a[:]...)
	if err != nil {
		return engine.AttemptStatus{}, engine.Result{}, err
	}
	_, r, rest := reply(m, ok)
	if !r.OK() {
		return engine.AttemptStatus{}, r, nil
	}
	if len(rest) != 7 {
		return engine.AttemptStatus{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	attempt, rest := engine.AttemptID{UUID: parseID(str(rest[0]))}, rest[1:]
	p, pok := parseProgress(str(rest[2]))
	end, eerr := strconv.Atoi(str(rest[3]))
	host, hok := parseOutcome(str(rest[4]))
	client, cok := parseOutcome(str(rest[5]))
	if !pok || eerr != nil || !hok || !cok {
		return engine.AttemptStatus{}, engine.Result{Outcome: engine.ServiceUnavailable}, nil
	}
	st := engine.AttemptStatus{
		Attempt: attempt, Listing: engine.ListingID{UUID: parseID(str(rest[0]))},
		RelayOnly: p.RelayOnly, ExpiresAt: s.wall(num(rest[1])),
		HostBound: p.HostBound, ClientBound: p.ClientBound, HostRelayed: p.HostRelayed, ClientRelayed: p.ClientRelayed,
		HostOutcome: host, ClientOutcome: client,
	}
	if end == 0 {
		st.State, st.Reason = p.Live()
	} else {
		st.State, st.Reason = p.Ended(engine.AttemptEnd(end))
	}
	return st, r, nil
}

// parseProgress reads prelude/50_removal.lua's eight progress flags.
func parseProgress(s string) (engine.AttemptProgress, bool) {
	if len(s) != 8 || strings.Trim(s, "01") != "" {
		return engine.AttemptProgress{}, false
	}
	f := func(i int) bool { return s[i] == '1' }
	return engine.AttemptProgress{
		RelayOnly: f(0), Offered: f(1), HostBound: f(2), ClientBound: f(3),
		HostRelayed: f(4), ClientRelayed: f(5), Introduced: f(6), Relayed: f(7),
	}, true
}

// parseOutcome reads an outcome report "path:ms" (empty when not reported).
func parseOutcome(s string) (engine.PunchOutcome, bool) {
	if s == "" {
		return engine.PunchOutcome{}, true
	}
	p, ms, ok := strings.Cut(s, ":")
	path, perr := strconv.ParseUint(p, 10, 8)
	n, merr := strconv.ParseUint(ms, 10, 32)
	if !ok || perr != nil || merr != nil {
		return engine.PunchOutcome{}, false
	}
	return engine.PunchOutcome{Path: engine.Path(path), ConnectMillis: uint32(n)}, true
}
