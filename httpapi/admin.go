package httpapi

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// Operator routes (docs/contracts/http.md#operator-routes) and whoami. An operator of tenant `*`
// acts in every tenant and on the whole instance (drain, instance stats);
// any other operator only in its own tenant, so another tenant's listing or
// subject is reported as not found, and its revocations are confined to
// its tenant.

func (a *API) whoami(ctx *fasthttp.RequestCtx, p *Principal) {
	s := acquireBuf()
	defer releaseBuf(s)
	game, env := p.Tenant.Game, p.Tenant.Env
	if p.Global {
		game, env = "*", "*"
	}
	b := append(s.b[:0], `{"subject":`...)
	b = appendString(b, string(p.Subject))
	b = append(b, `,"game_id":`...)
	b = appendString(b, game)
	b = append(b, `,"environment_id":`...)
	b = appendString(b, env)
	b = append(b, `,"roles":[`...)
	first := true
	for _, rn := range roleNames {
		if p.Roles.Has(rn.role) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, rn.name)
		}
	}
	b = append(b, "]}"...)
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
}

func (a *API) revokeListing(ctx *fasthttp.RequestCtx, p *Principal, id []byte) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return
	}
	start := time.Now()
	r, err := a.store.RevokeListing(context.Background(), engine.RevokeListing{
		Tenant: p.Tenant, AnyTenant: p.Global, Listing: engine.ListingID{UUID: lid},
	})
	if !a.storeAnswered(ctx, opAdminRevokeListing, r, err, start) {
		return
	}
	ctx.SetStatusCode(fasthttp.StatusNoContent)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "listing revoked",
		slog.String("listing_id", lid.String()), slog.String("operator", string(p.Subject)))
}

func (a *API) revokePrincipal(ctx *fasthttp.RequestCtx, p *Principal) {
	s := acquireBuf()
	defer releaseBuf(s)
	subject, ttl, err := decodeRevocation(&s.dec, ctx.Request.Body())
	if err != nil {
		a.writeInputError(ctx, err)
		return
	}
	if !p.Global {
		// A tenant operator may revoke only principals of its own tenant:
		// the revocation pool is shared, so this bounds what one tenant's
		// operator can take of it.
		target, ok := a.ps.Lookup(subject)
		if !ok || target.Global || target.Tenant != p.Tenant {
			a.writeProblem(ctx, probNotFound, "no such subject in this tenant", nil)
			return
		}
	}
	start := time.Now()
	var removed int
	var r engine.Result
	if p.Global {
		removed, r, err = a.store.RevokePrincipal(context.Background(), subject, time.Duration(ttl)*time.Second)
	} else {
		removed, r, err = a.store.RevokeTenantPrincipal(context.Background(), p.Tenant, subject, time.Duration(ttl)*time.Second)
	}
	if !a.storeAnswered(ctx, opAdminRevokePrincipal, r, err, start) {
		return
	}
	b := append(s.b[:0], `{"removed":`...)
	b = appendInt(b, int64(removed))
	b = append(b, '}')
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "principal revoked",
		slog.String("subject", string(subject)), slog.Int("removed", removed),
		slog.Uint64("ttl_s", ttl), slog.String("scope", scopeOf(p)), slog.String("operator", string(p.Subject)))
}

// scopeOf names where p's revocations apply, for the log.
func scopeOf(p *Principal) string {
	if p.Global {
		return "*"
	}
	return p.Tenant.Game + "/" + p.Tenant.Env
}

func (a *API) drain(ctx *fasthttp.RequestCtx, p *Principal) {
	if err := a.store.BeginDrain(context.Background()); err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	a.storeStats.Invalidate() // readiness says draining from now on
	writeJSON(ctx, fasthttp.StatusAccepted, []byte(`{"status":"draining"}`))
	a.log.LogAttrs(context.Background(), slog.LevelInfo, "drain requested",
		slog.String("operator", string(p.Subject)))
}

func (a *API) stats(ctx *fasthttp.RequestCtx) {
	st, age := a.storeStats.Stats()
	s := acquireBuf()
	defer releaseBuf(s)
	b := append(s.b[:0], `{"instance_id":`...)
	b = appendUUID(b, st.InstanceID)
	b = append(b, `,"available":`...)
	b = strconv.AppendBool(b, st.Available)
	b = append(b, `,"draining":`...)
	b = strconv.AppendBool(b, st.Draining)
	b = append(b, `,"pools":{`...)
	for i := range st.Pools {
		b = appendKey(b, engine.Pool(i+1).String(), i == 0)
		b = append(b, `{"used":`...)
		b = appendInt(b, int64(st.Pools[i].Used))
		b = append(b, `,"ceiling":`...)
		b = appendInt(b, int64(st.Pools[i].Ceiling))
		b = append(b, '}')
	}
	b = append(b, `},"quotas":{`...)
	for i, q := range quotaLimits(&a.limits) {
		b = appendKey(b, q.pool.String(), i == 0)
		b = appendInt(b, int64(q.limit))
	}
	b = append(b, `},"in_flight":`...)
	b = appendInt(b, int64(st.InFlight))
	b = append(b, `,"age_ms":`...)
	b = appendInt(b, age.Milliseconds())
	b = append(b, '}')
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// tenantStats answers one tenant's usage: listings, attempts and
// idempotency records, each used and the quota it is held to. A tenant
// operator reads its own tenant (naming another one is 403); a global
// operator names the tenant with game_id and environment_id.
func (a *API) tenantStats(ctx *fasthttp.RequestCtx, p *Principal) {
	t, named, err := parseTenantQuery(ctx)
	if err != nil {
		a.writeInputError(ctx, err)
		return
	}
	switch {
	case !p.Global && named && t != p.Tenant:
		a.writeProblem(ctx, probForbidden, "a tenant operator may read only its own tenant", nil)
		return
	case !p.Global:
		t = p.Tenant
	case !named:
		a.writeInputError(ctx, missingField("game_id"))
		return
	}
	u := a.store.TenantUsage(t)
	s := acquireBuf()
	defer releaseBuf(s)
	b := append(s.b[:0], `{"game_id":`...)
	b = appendString(b, t.Game)
	b = append(b, `,"environment_id":`...)
	b = appendString(b, t.Env)
	b = append(b, `,"pools":{`...)
	for i, ps := range [...]struct {
		name string
		st   engine.PoolStat
	}{{"listings", u.Listings}, {"attempts", u.Attempts}, {"idempotency", u.Idempotency}} {
		b = appendKey(b, ps.name, i == 0)
		b = append(b, `{"used":`...)
		b = appendInt(b, int64(ps.st.Used))
		b = append(b, `,"quota":`...)
		b = appendInt(b, int64(ps.st.Ceiling))
		b = append(b, '}')
	}
	b = append(b, `},"owner_listing_quota":`...)
	b = appendInt(b, int64(a.limits.OwnerListingQuota))
	b = append(b, `,"subject_attempt_quota":`...)
	b = appendInt(b, int64(a.limits.SubjectAttemptQuota))
	b = append(b, '}')
	s.b = b
	sendJSON(ctx, fasthttp.StatusOK, s)
}

// parseTenantQuery reads game_id and environment_id from the query: both
// (named) or neither. Unknown and repeated parameters are rejected.
func parseTenantQuery(ctx *fasthttp.RequestCtx) (t engine.Tenant, named bool, err error) {
	var seenGame, seenEnv bool
	for k, v := range ctx.QueryArgs().All() {
		var seen *bool
		switch string(k) {
		case "game_id":
			seen, t.Game = &seenGame, string(v)
		case "environment_id":
			seen, t.Env = &seenEnv, string(v)
		default:
			return engine.Tenant{}, false, unknownField(k)
		}
		if *seen {
			return engine.Tenant{}, false, &engine.InputError{Field: string(k), Reason: "is given more than once"}
		}
		*seen = true
	}
	switch {
	case !seenGame && !seenEnv:
		return engine.Tenant{}, false, nil
	case !seenGame:
		return engine.Tenant{}, false, missingField("game_id")
	case !seenEnv:
		return engine.Tenant{}, false, missingField("environment_id")
	}
	if err := t.Validate(); err != nil {
		return engine.Tenant{}, false, err
	}
	return t, true, nil
}
