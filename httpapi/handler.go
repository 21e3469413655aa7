package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"
)

// MaxBodySize is the largest request body accepted (CONTRACT.md §2: 413 above).
const MaxBodySize = 16 << 10

// Handler is the whole router. The checks run in the order of CONTRACT.md
// §7.9: 413, 401, 404/405, 403 (revoked, role, tenant), 415, then each
// operation's 400 checks and store outcomes.
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
	revoked, err := a.revoked(p)
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	if revoked {
		a.writeProblem(ctx, probRevoked, "", nil)
		return
	}
	acc := &opAccess[o]
	if acc.roles != 0 && acc.roles&p.Roles == 0 {
		a.writeProblem(ctx, probForbidden, "the principal lacks the role for this route", nil)
		return
	}
	if acc.global && !p.Global {
		a.writeProblem(ctx, probForbidden, "only a global operator (tenant *) may act on the whole instance", nil)
		return
	}
	if acc.tenant && p.Global {
		a.writeProblem(ctx, probForbidden, "a global principal has no tenant for this route", nil)
		return
	}
	if acc.hasBody && !isJSONContentType(ctx.Request.Header.ContentType()) {
		a.writeProblem(ctx, probUnsupportedMediaType, "", nil)
		return
	}
	switch o {
	case opWhoami:
		a.whoami(ctx, p)
	case opBrowse:
		a.browse(ctx, p)
	case opGetListing:
		a.getListing(ctx, p, id)
	case opCreateListing:
		a.createListing(ctx, p)
	case opRenewLease:
		a.renewLease(ctx, p, id)
	case opDeleteListing:
		a.deleteListing(ctx, p, id)
	case opCreateAttempt:
		a.createAttempt(ctx, p, id)
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
		a.attemptStatus(ctx, p, id)
	case opHostRelay:
		a.hostRelay(ctx, p, id)
	default:
		panic("BUG: unrouted operation " + opNames[o])
	}
}

// revoked reports whether p may do nothing: a global revocation of its
// subject, or, for a tenant principal, one confined to its tenant.
func (a *API) revoked(p *Principal) (bool, error) {
	if p.Global {
		return a.store.Revoked(context.Background(), p.Subject)
	}
	return a.store.RevokedInTenant(context.Background(), p.Tenant, p.Subject)
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
// parameters (CONTRACT.md §7.15).
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
