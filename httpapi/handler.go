package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// MaxBodySize is the largest request body accepted (docs/contracts/http.md#errors: 413 above).
const MaxBodySize = 16 << 10

// Handler is the whole router. The checks run in the order of
// docs/contracts/http.md#error-precedence: 413, 401, 404/405, 403 (revoked,
// role, tenant), 415, then each operation's 400 checks and store outcomes.
// Revocation is checked by its own store call before the rest, except on the
// routes whose transition decides it (create listing, renew, join: one call
// each when valid) and, on a store whose reads decide it (revocation_reads.go),
// browse, get listing and attempt status, which check it apart only before an
// answer their transition or read did not decide.
func (a *API) Handler(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	r, id := match(ctx.Path())
	o, allow := resolve(r, ctx.Method())
	a.serve(ctx, r, o, allow, id)
	status := ctx.Response.StatusCode()
	a.metrics.request(o, status, time.Since(start))
	if a.log.Enabled(context.Background(), slog.LevelDebug) {
		a.log.LogAttrs(context.Background(), slog.LevelDebug, "request",
			slog.String("method", string(ctx.Method())), slog.String("route", opNames[o]),
			slog.Int("status", status), slog.Duration("duration", time.Since(start)))
	}
}

func (a *API) serve(ctx *fasthttp.RequestCtx, r route, o op, allow string, id []byte) {
	if len(ctx.Request.Body()) > MaxBodySize {
		a.writeProblem(ctx, probPayloadTooLarge, "", nil)
		return
	}
	if a.strictHeaders(ctx) {
		return
	}
	if r.public() {
		if o == opUnknown {
			a.methodNotAllowed(ctx, allow)
			return
		}
		a.servePublic(ctx, o)
		return
	}
	p := a.authenticate(ctx)
	if p == nil {
		a.writeProblem(ctx, probUnauthorized, "a valid bearer token is required", nil)
		return
	}
	if r == routeNone {
		a.writeProblem(ctx, probNotFound, "no such route", nil)
		return
	}
	if o == opUnknown {
		a.methodNotAllowed(ctx, allow)
		return
	}
	if opAccess[o].ownRevocation || a.readDecidesRevocation(o) {
		if !a.serveOp(ctx, p, o, id) {
			a.answerRevoked(ctx, p)
		}
		return
	}
	if a.answerRevokedOn(ctx, p, opAccess[o].monitoring && p.Global) {
		return
	}
	a.serveOp(ctx, p, o, id)
}

// serveOp runs the role, tenant and 415 checks, then the operation. For an
// operation whose transition (or read) decides revocation it reports whether
// the answer came from that transition past its revocation check; if not, a
// revoked principal's 403 must still replace it.
func (a *API) serveOp(ctx *fasthttp.RequestCtx, p *Principal, o op, id []byte) bool {
	acc := &opAccess[o]
	if acc.roles != 0 && acc.roles&p.Roles == 0 {
		a.writeProblem(ctx, probForbidden, "the principal lacks the role for this route", nil)
		return false
	}
	if acc.global && !p.Global {
		a.writeProblem(ctx, probForbidden, "only a global operator (tenant *) may act on the whole instance", nil)
		return false
	}
	if acc.tenant && p.Global {
		a.writeProblem(ctx, probForbidden, "a global principal has no tenant for this route", nil)
		return false
	}
	if acc.hasBody && !isJSONContentType(ctx.Request.Header.ContentType()) {
		a.writeProblem(ctx, probUnsupportedMediaType, "", nil)
		return false
	}
	switch o {
	case opWhoami:
		a.whoami(ctx, p)
	case opBrowse:
		return a.browse(ctx, p)
	case opGetListing:
		return a.getListing(ctx, p, id)
	case opCreateListing:
		return a.createListing(ctx, p)
	case opRenewLease:
		return a.renewLease(ctx, p, id)
	case opDeleteListing:
		a.deleteListing(ctx, p, id)
	case opCreateAttempt:
		return a.createAttempt(ctx, p, id)
	case opQuickJoin:
		return a.quickJoin(ctx, p)
	case opAdminRevokeListing:
		a.revokeListing(ctx, p, id)
	case opAdminRevokePrincipal:
		a.revokePrincipal(ctx, p)
	case opAdminDrain:
		a.drain(ctx, p)
	case opAdminStats:
		a.stats(ctx)
	case opAdminTenantStats:
		a.tenantStats(ctx, p)
	case opAdminReload:
		a.reloadPrincipals(ctx, p)
	case opGetAttempt:
		return a.attemptStatus(ctx, p, id)
	case opHostRelay:
		a.hostRelay(ctx, p, id)
	case opClientRelay:
		a.clientRelay(ctx, p, id)
	case opMetrics:
		a.serveMetrics(ctx)
	default:
		panic("BUG: unrouted operation " + opNames[o])
	}
	return false
}

// answerRevoked answers 403 revoked if p is revoked, or the store's error
// if that cannot be told, and reports whether it answered. The answer
// replaces any already written, with the Retry-After an outcome set.
func (a *API) answerRevoked(ctx *fasthttp.RequestCtx, p *Principal) bool {
	return a.answerRevokedOn(ctx, p, false)
}

// answerRevokedOn is answerRevoked; on a monitoring route it takes the
// answer the route's other scrapes share (monitorRevoked).
func (a *API) answerRevokedOn(ctx *fasthttp.RequestCtx, p *Principal, monitoring bool) bool {
	var revoked bool
	var err error
	if monitoring {
		revoked, err = a.monitorRevoked(p)
	} else {
		revoked, err = a.revoked(p)
	}
	if err == nil && !revoked {
		return false
	}
	ctx.Response.Header.Del("Retry-After")
	if err != nil {
		a.writeStoreError(ctx, err)
	} else {
		a.writeProblem(ctx, probRevoked, "", nil)
	}
	return true
}

// checkedRevocation reports whether a transition that decides revocation
// answered r past that check: every outcome but the two the reference
// order puts before it.
func checkedRevocation(r engine.Result) bool {
	return r.Outcome != engine.ServiceUnavailable && r.Outcome != engine.Draining
}

// revoked reports whether p may do nothing: a global revocation of its
// subject, or, for a tenant principal, one confined to its tenant.
func (a *API) revoked(p *Principal) (bool, error) {
	if p.Global {
		return a.store.Revoked(context.Background(), p.Subject)
	}
	return a.store.RevokedInTenant(context.Background(), p.Tenant, p.Subject)
}

// monitorRevoked is revoked on a monitoring route (global principals
// only): an answer at most as old as the figures it scrapes.
func (a *API) monitorRevoked(p *Principal) (bool, error) {
	return a.monitorRevocations.revoked(p.Subject, func() (bool, error) { return a.revoked(p) })
}

func (a *API) methodNotAllowed(ctx *fasthttp.RequestCtx, allow string) {
	a.writeProblem(ctx, probMethodNotAllowed, "allowed: "+allow, nil)
	ctx.Response.Header.Set("Allow", allow)
}

// maxTokenLen bounds a bearer token.
const maxTokenLen = 512

// authenticate returns the caller's principal, or nil. Only the scheme
// "Bearer" (any case) with a 1-512 byte visible-ASCII token is accepted.
func (a *API) authenticate(ctx *fasthttp.RequestCtx) *Principal {
	h := ctx.Request.Header.Peek("Authorization")
	const scheme = "bearer "
	if len(h) <= len(scheme) || !bytes.EqualFold(h[:len(scheme)], []byte(scheme)) {
		return nil
	}
	tok := bytes.TrimLeft(h[len(scheme):], " ")
	if len(tok) == 0 || len(tok) > maxTokenLen {
		return nil
	}
	for _, c := range tok {
		if c < 0x21 || c > 0x7e {
			return nil
		}
	}
	p, ok := a.ps.Authenticate(tok)
	if !ok {
		return nil
	}
	return p
}

// isJSONContentType accepts application/json in any case, with optional
// parameters (docs/contracts/http.md#conventions).
func isJSONContentType(ct []byte) bool {
	mt, _, _ := bytes.Cut(ct, []byte{';'})
	mt = bytes.TrimSpace(mt)
	return bytes.EqualFold(mt, []byte("application/json"))
}

// writeJSON answers status with a JSON body copied from b.
func writeJSON(ctx *fasthttp.RequestCtx, status int, b []byte) {
	ctx.SetStatusCode(status)
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	ctx.SetBody(b)
}

// sendJSON answers status with the JSON body s.b, copied into the
// response's own buffer. (Swapping buffers with Response.SwapBody would save
// the copy but hand our pooled buffers to fasthttp's size-calibrated pool,
// which drops large ones: browse pages then regrew on every request.)
func sendJSON(ctx *fasthttp.RequestCtx, status int, s *scratch) {
	writeJSON(ctx, status, s.b)
}
