package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// Publisher routes: create, renew and delete a listing
// (docs/contracts/http.md#create-a-listing,
// docs/contracts/http.md#renew-a-lease,
// docs/contracts/http.md#delete-a-listing).

// parseID parses a {listing_id} path segment (400 when malformed).
func (a *API) parseID(ctx *fasthttp.RequestCtx, id []byte, field string) (engine.UUID, bool) {
	u, ok := engine.ParseUUID(id)
	if !ok {
		a.writeProblem(ctx, probInvalidRequest, field+": must be a UUID (8-4-4-4-12 hex)", nil)
	}
	return u, ok
}

// idempotencyKey reads and checks the Idempotency-Key header.
func (a *API) idempotencyKey(ctx *fasthttp.RequestCtx) (string, bool) {
	k := ctx.Request.Header.Peek("Idempotency-Key")
	if k == nil {
		a.writeProblem(ctx, probInvalidRequest, "Idempotency-Key: header is required", nil)
		return "", false
	}
	key := string(k)
	if err := engine.ValidateIdempotencyKey(key); err != nil {
		a.writeInputError(ctx, err)
		return "", false
	}
	return key, true
}

// createListing answers POST /v1/listings (docs/contracts/http.md#create-a-listing). It reports
// whether its answer came from the transition past its revocation check
// (see serveOp).
func (a *API) createListing(ctx *fasthttp.RequestCtx, p *Principal) (checked bool) {
	key, ok := a.idempotencyKey(ctx)
	if !ok {
		return false
	}
	s := acquireBuf()
	defer releaseBuf(s)
	spec := &s.spec
	if err := decodeCreateListing(&s.dec, ctx.Request.Body(), spec); err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	if spec.RelayOnlyJoins && a.relay == nil {
		a.writeProblem(ctx, probRelayUnavailable, "relay_only_joins: the relay fallback is not enabled on this server", nil)
		return false
	}
	// The spec outlives the request in the store. Its strings and metadata
	// slice were freshly allocated by the decoder (the scratch spec is reset
	// before each decode), so a copy of the struct owns them; the region is
	// interned so browse filters can find it without allocating.
	owned := *spec
	owned.Region = a.regions.add(p.Tenant, spec.Region)
	cmd := engine.CreateListing{
		Tenant: p.Tenant, Owner: p.Subject, IdempotencyKey: key, Spec: owned,
		Doc: listingDoc(&owned),
	}
	start := time.Now()
	v, r, err := a.store.CreateListing(context.Background(), cmd)
	if !a.storeAnswered(ctx, opCreateListing, r, err, start) {
		return err == nil && checkedRevocation(r)
	}
	b := append(s.b[:0], `{"listing_id":`...)
	b = appendUUID(b, v.ID.UUID)
	b = append(b, `,"lease":{"lease_id":`...)
	b = appendUUID(b, v.Lease.UUID)
	b = append(b, `,"token":"`...)
	leaseCap := a.keys.Lease(v.Lease)
	b = leaseCap.AppendToken(b)
	b = append(b, `","version":`...)
	b = appendUint(b, v.Version)
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, v.LeaseExpiresAt)
	b = append(b, `,"ttl_s":`...)
	b = appendInt(b, a.leaseTTLOf(&v))
	b = append(b, `},"presence":{"handle":`...)
	b = appendUUID(b, v.Presence.UUID)
	b = append(b, `,"token":"`...)
	presCap := a.keys.Presence(v.Presence)
	b = presCap.AppendToken(b)
	b = append(b, `","mediator":`...)
	b = appendString(b, a.newListingMediator(v.ID))
	b = append(b, `,"interval_s":`...)
	b = appendInt(b, PresenceInterval)
	b = append(b, `,"ttl_s":`...)
	b = appendInt(b, a.presenceTTL)
	b = append(b, "}}"...)
	s.b = b
	status := fasthttp.StatusCreated
	if r.Replay {
		status = fasthttp.StatusOK
		ctx.Response.Header.Set("Idempotent-Replay", "true")
	}
	ctx.Response.Header.Set("Location", prefixListing+v.ID.String())
	sendJSON(ctx, status, s)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "listing created",
		slog.String("listing_id", v.ID.String()), slog.String("subject", string(p.Subject)),
		slog.String("game_id", p.Tenant.Game), slog.String("environment_id", p.Tenant.Env),
		slog.Bool("replay", r.Replay))
	return true
}

// leaseKeyOf is the fingerprint a renew or delete presents. A malformed token
// cannot match any lease, but the store still decides the answer, so the
// outcomes that come before NotFound (docs/contracts/http.md#error-precedence:
// unavailable, draining) and the players check of
// docs/contracts/http.md#error-precedence keep their precedence: it presents
// the zero fingerprint, which no lease key equals (a lease key is a truncated
// SHA-256; all zero bits has probability 2^-128).
func leaseKeyOf(tok *engine.Capability, ok bool) engine.Fingerprint {
	if !ok {
		return engine.Fingerprint{}
	}
	return engine.FingerprintOf(tok)
}

func (a *API) leaseTTLOf(v *engine.ListingView) int64 {
	if v.LeaseTTL > 0 {
		return seconds(v.LeaseTTL)
	}
	return a.leaseTTL
}

// renewLease answers PUT /v1/listings/{id}/lease. Apart from encoding into a
// pooled buffer it does not allocate. It reports whether its answer came
// from the transition past its revocation check (see serveOp).
func (a *API) renewLease(ctx *fasthttp.RequestCtx, p *Principal, id []byte) (checked bool) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return false
	}
	s := acquireBuf()
	defer releaseBuf(s)
	req := &s.renew
	if err := decodeRenew(&s.dec, ctx.Request.Body(), req); err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	cmd := engine.RenewLease{
		Tenant: p.Tenant, Owner: p.Subject, Listing: engine.ListingID{UUID: lid},
		Lease: req.Lease, LeaseKey: leaseKeyOf(&req.Token, req.TokenOK),
		ExpectedVersion: req.ExpectedVersion, CurrentPlayers: req.CurrentPlayers,
		SetAttributes: req.SetAttributes, Attributes: req.Attributes,
	}
	start := time.Now()
	v, r, err := a.store.RenewLease(context.Background(), cmd)
	if err != nil {
		a.writeStoreError(ctx, err)
		return false
	}
	a.metrics.outcome(opRenewLease, r.Outcome, start)
	if !r.OK() {
		var extra func([]byte) []byte
		if r.Outcome == engine.Conflict {
			version := v.Version
			extra = func(b []byte) []byte {
				b = append(b, `,"current_version":`...)
				return appendUint(b, version)
			}
		}
		a.writeOutcome(ctx, r, extra)
		return checkedRevocation(r)
	}
	b := append(s.b[:0], `{"version":`...)
	b = appendUint(b, v.Version)
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, v.LeaseExpiresAt)
	b = append(b, `,"ttl_s":`...)
	b = appendInt(b, a.leaseTTLOf(&v))
	b = append(b, `,"mediator":`...)
	b = appendString(b, a.listingMediator(v.PresenceInstance, v.ID))
	b = append(b, '}')
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
	return true
}

// deleteListing answers DELETE /v1/listings/{id} (headers Lease-Id, Lease-Token).
func (a *API) deleteListing(ctx *fasthttp.RequestCtx, p *Principal, id []byte) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return
	}
	hl := ctx.Request.Header.Peek("Lease-Id")
	if hl == nil {
		a.writeProblem(ctx, probInvalidRequest, "Lease-Id: header is required", nil)
		return
	}
	lease, ok := a.parseID(ctx, hl, "Lease-Id")
	if !ok {
		return
	}
	ht := ctx.Request.Header.Peek("Lease-Token")
	if ht == nil {
		a.writeProblem(ctx, probInvalidRequest, "Lease-Token: header is required", nil)
		return
	}
	tok, tokOK := engine.ParseToken(ht)
	cmd := engine.DeleteListing{
		Tenant: p.Tenant, Owner: p.Subject, Listing: engine.ListingID{UUID: lid},
		Lease: engine.LeaseID{UUID: lease}, LeaseKey: leaseKeyOf(&tok, tokOK),
	}
	start := time.Now()
	r, err := a.store.DeleteListing(context.Background(), cmd)
	if !a.storeAnswered(ctx, opDeleteListing, r, err, start) {
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "listing deleted",
		slog.String("listing_id", cmd.Listing.String()), slog.String("subject", string(p.Subject)))
}
