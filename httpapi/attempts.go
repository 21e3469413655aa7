package httpapi

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/turncred"
	"github.com/valyala/fasthttp"
)

// createAttempt answers POST /v1/listings/{id}/join-attempts
// (docs/contracts/http.md#create-a-join-attempt) and, for a new attempt, has
// the host told over UDP (the OFFER). It reports whether its answer came from
// the transition past its revocation check (see serveOp).
func (a *API) createAttempt(ctx *fasthttp.RequestCtx, p *Principal, id []byte) (checked bool) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return false
	}
	key, ok := a.idempotencyKey(ctx)
	if !ok {
		return false
	}
	s := acquireBuf()
	defer releaseBuf(s)
	pv, relayOnly, err := decodeJoin(&s.dec, ctx.Request.Body())
	if !a.admitJoin(ctx, p, relayOnly, err) {
		return false
	}
	start := time.Now()
	v, r, err := a.store.CreateJoinAttempt(context.Background(), engine.CreateAttempt{
		Tenant: p.Tenant, Client: p.Subject, IdempotencyKey: key,
		Listing: engine.ListingID{UUID: lid}, ProtocolVersion: pv, RelayOnly: relayOnly,
	})
	return a.answerAttempt(ctx, p, s, opCreateAttempt, v, r, err, relayOnly, start)
}

// admitJoin checks a join's (or quick join's) body before its transition,
// answering when it may not go on: err is the body's decoding error (400),
// relayOnly what it asked.
func (a *API) admitJoin(ctx *fasthttp.RequestCtx, p *Principal, relayOnly bool, err error) bool {
	if err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	if relayOnly && a.relay == nil {
		a.writeProblem(ctx, probRelayUnavailable, "relay_only: the relay fallback is not enabled on this server", nil)
		return false
	}
	// A relay-only answer carries a relay credential: counted before the
	// attempt exists, so a refusal creates nothing. (A listing that requires
	// relay-only joins is known after the transition: counted then.)
	if relayOnly && !a.relayCap.take(p.Subject, time.Now()) {
		a.writeProblem(ctx, probQuotaExceeded, relayCapDetail, nil)
		return false
	}
	return true
}

// answerAttempt answers the transition of a join or quick join (o) that
// began at start: v, r and err are the store's answer, relayOnly what the
// request asked. A replay answers as the first answer did, with 200 and
// Idempotent-Replay. It reports whether the answer came from the
// transition past its revocation check (see serveOp).
func (a *API) answerAttempt(ctx *fasthttp.RequestCtx, p *Principal, s *scratch, o op,
	v engine.AttemptView, r engine.Result, err error, relayOnly bool, start time.Time) (checked bool) {
	if err != nil {
		a.writeStoreError(ctx, err)
		return false
	}
	a.metrics.outcome(o, r.Outcome, start)
	if o == opQuickJoin && r.Outcome == engine.NotFound {
		a.writeProblem(ctx, probNotFound, "no listing matches the query", nil)
		return checkedRevocation(r)
	}
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return checkedRevocation(r)
	}
	if v.RelayOnly && a.relay == nil {
		// The listing requires relay-only joins (created where relay was
		// on); the attempt can never connect here: no OFFER, and it expires
		// unused.
		a.writeProblem(ctx, probRelayUnavailable, "the listing requires relay-only joins and the relay fallback is not enabled on this server", nil)
		return true
	}
	if v.RelayOnly && !relayOnly && !a.relayCap.take(p.Subject, time.Now()) {
		// The attempt exists; a replay of this join answers it with its
		// credential once the caller is within the cap again.
		a.writeProblem(ctx, probQuotaExceeded, relayCapDetail, nil)
		return true
	}
	if !r.Replay && a.offerer != nil {
		a.offerer.Offer(v)
	}
	b := append(s.b[:0], `{"attempt_id":`...)
	b = appendUUID(b, v.ID.UUID)
	b = append(b, `,"listing_id":`...)
	b = appendUUID(b, v.Listing.UUID)
	b = append(b, `,"handle":`...)
	b = appendUUID(b, v.Handle.UUID)
	b = append(b, `,"token":"`...)
	c := a.keys.AttemptClient(v.Handle)
	b = c.AppendToken(b)
	b = append(b, `","mediator":`...)
	b = appendString(b, a.listingMediator(v.HostPresenceInstance, v.Listing))
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, v.ExpiresAt)
	b = append(b, `,"ttl_s":`...)
	ttl := a.attemptTTL
	if v.TTL > 0 {
		ttl = seconds(v.TTL)
	}
	b = appendInt(b, ttl)
	b = append(b, `,"relay_only":`...)
	b = strconv.AppendBool(b, v.RelayOnly)
	if a.relay != nil && v.RelayOnly {
		// Only a relay-only attempt needs the relay from the start; any
		// other's client asks GET /v1/join-attempts/{id}/relay once its
		// punch failed (clientRelay).
		b = append(b, ',')
		b = a.appendRelay(b, v.ID, turncred.SideClient, v.ExpiresAt, v.TTL)
	}
	b = append(b, '}')
	s.b = b
	status := fasthttp.StatusCreated
	if r.Replay {
		status = fasthttp.StatusOK
		ctx.Response.Header.Set("Idempotent-Replay", "true")
	}
	sendJSON(ctx, status, s)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "join attempt created",
		slog.String("attempt_id", v.ID.String()), slog.String("listing_id", v.Listing.String()),
		slog.String("subject", string(p.Subject)), slog.Bool("replay", r.Replay))
	return true
}
