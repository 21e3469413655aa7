package httpapi

import (
	"context"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// quickJoin answers POST /v1/quick-join (docs/contracts/http.md#quick-join):
// a join attempt on the best listing the query's filters find, chosen by
// the store in the join's own transition
// (docs/contracts/semantics.md#quick-join). The answer is a join's. It
// reports whether its answer came from the transition past its revocation
// check (see serveOp).
func (a *API) quickJoin(ctx *fasthttp.RequestCtx, p *Principal) (checked bool) {
	if a.quick == nil {
		a.writeProblem(ctx, probNotFound, "no such route: this store does not quick join", nil)
		return false
	}
	key, ok := a.idempotencyKey(ctx)
	if !ok {
		return false
	}
	s := acquireBuf()
	defer releaseBuf(s)
	q := &s.query
	if _, err := a.parseQuery(ctx, p, q, &s.filters, false); err != nil {
		a.writeInputError(ctx, err)
		return false
	}
	var relayOnly bool
	var err error
	if body := ctx.Request.Body(); len(body) > 0 {
		// The body is optional; one that is given is JSON.
		if !isJSONContentType(ctx.Request.Header.ContentType()) {
			a.writeProblem(ctx, probUnsupportedMediaType, "", nil)
			return false
		}
		relayOnly, err = decodeQuickJoin(&s.dec, body)
	}
	if !a.admitJoin(ctx, p, relayOnly, err) {
		return false
	}
	start := time.Now()
	v, r, err := a.quick.QuickJoin(context.Background(), engine.QuickJoin{
		Join: engine.CreateAttempt{Tenant: p.Tenant, Client: p.Subject, IdempotencyKey: key,
			ProtocolVersion: q.ProtocolVersion, RelayOnly: relayOnly},
		Query: *q,
	})
	return a.answerAttempt(ctx, p, s, opQuickJoin, v, r, err, relayOnly, start)
}

var quickJoinFields = []string{"relay_only"}

// decodeQuickJoin reads a quick join's body: {} or {"relay_only":bool}.
func decodeQuickJoin(d *decoder, body []byte) (relayOnly bool, err error) {
	err = d.object(body, quickJoinFields, 0, func(int) (err error) {
		relayOnly, err = d.readBool(quickJoinFields[0])
		return err
	})
	return relayOnly, err
}
