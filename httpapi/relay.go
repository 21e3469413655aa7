package httpapi

import (
	"context"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/rendezvous/rendezvous/internal/turncred"
	"github.com/valyala/fasthttp"
)

// appendRelay appends the "relay" member: side's TURN credential for the
// attempt, in the shape of WebRTC's RTCIceServer
// ("relay":{"urls":[…],"username":…,"credential":…,"ttl_s":N}). The
// credential derives from the attempt's ID, the side and the attempt's
// expiry alone (turncred.IssueForAttempt), so a replay gets the same one,
// and it expires the allocation margin (--turn-ttl) after the attempt;
// ttl_s is the attempt's life left (left, at least 0) plus that margin.
// The credential is never logged.
func (a *API) appendRelay(b []byte, id engine.AttemptID, side byte, attemptExpires time.Time, left time.Duration) []byte {
	c := a.relay.IssueForAttempt(id.String(), side, attemptExpires)
	b = append(b, `"relay":{"urls":[`...)
	for i, u := range a.relay.URLs() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, u)
	}
	b = append(b, `],"username":`...)
	b = appendString(b, c.Username)
	b = append(b, `,"credential":`...)
	b = appendString(b, c.Credential)
	b = append(b, `,"ttl_s":`...)
	b = appendInt(b, seconds(max(left, 0)+a.relay.TTL()))
	return append(b, '}')
}

// hostRelay answers GET /v1/listings/{listing_id}/join-attempts/{attempt}/relay
// to the listing's owner: the host side's relay credential for one live
// attempt of the listing, named by its attempt ID or its handle (the host
// knows the handle from OFFER). Anyone else, an unknown attempt, one of
// another listing and an ended one get 404; 409 relay_unavailable when
// relay is off.
func (a *API) hostRelay(ctx *fasthttp.RequestCtx, p *Principal, id []byte) {
	lid, ok := a.parseID(ctx, id, "listing_id")
	if !ok {
		return
	}
	seg := relayAttemptSegment(ctx.Path()[len(prefixListing)+len(id)+1:])
	aid, ok := a.parseID(ctx, seg, "attempt_id")
	if !ok {
		return
	}
	if a.relay == nil {
		a.writeProblem(ctx, probRelayUnavailable, "", nil)
		return
	}
	if !a.relayCap.take(p.Subject, time.Now()) {
		a.writeProblem(ctx, probQuotaExceeded, relayCapDetail, nil)
		return
	}
	start := time.Now()
	lv, r, err := a.store.GetListing(context.Background(), engine.GetListing{Tenant: p.Tenant, Listing: engine.ListingID{UUID: lid}})
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	if r.OK() && lv.Owner != p.Subject {
		r = engine.Result{Outcome: engine.NotFound} // another publisher's listing: no existence leak
	}
	var st engine.AttemptStatus
	if r.OK() {
		q := engine.GetAttempt{Tenant: p.Tenant, Subject: p.Subject, Attempt: engine.AttemptID{UUID: aid}}
		if st, r, err = a.store.AttemptStatus(context.Background(), q); err == nil && r.Outcome == engine.NotFound {
			q.Attempt, q.Handle = engine.AttemptID{}, engine.Handle{UUID: aid}
			st, r, err = a.store.AttemptStatus(context.Background(), q)
		}
		if err != nil {
			a.writeStoreError(ctx, err)
			return
		}
	}
	if r.OK() && (st.Listing.UUID != lid || st.State == engine.AttemptExpired || st.State == engine.AttemptFailed) {
		r = engine.Result{Outcome: engine.NotFound}
	}
	a.metrics.outcome(opHostRelay, r.Outcome, start)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	a.sendRelay(ctx, &st, turncred.SideHost)
}

// clientRelay answers GET /v1/join-attempts/{attempt_id}/relay to the
// attempt's client: its relay credential, once the attempt needs the relay.
// A relay-only attempt's client got it in the join answer already; any
// other needs it only after a failed punch, so after the introduction
// (both sides bound) and not once a side reported a direct path (409
// conflict before or after that). Ended, unknown or another principal's
// attempts get 404; 409 relay_unavailable when relay is off; 429 over the
// per-principal cap.
func (a *API) clientRelay(ctx *fasthttp.RequestCtx, p *Principal, id []byte) {
	aid, ok := a.parseID(ctx, id, "attempt_id")
	if !ok {
		return
	}
	if a.relay == nil {
		a.writeProblem(ctx, probRelayUnavailable, "", nil)
		return
	}
	st, r, err := a.store.AttemptStatus(context.Background(), engine.GetAttempt{Tenant: p.Tenant, Subject: p.Subject, Attempt: engine.AttemptID{UUID: aid}})
	if err != nil {
		a.writeStoreError(ctx, err)
		return
	}
	if r.OK() && (st.State == engine.AttemptExpired || st.State == engine.AttemptFailed) {
		r = engine.Result{Outcome: engine.NotFound}
	}
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return
	}
	direct := st.HostOutcome.Path == engine.PathDirect || st.ClientOutcome.Path == engine.PathDirect
	if !st.RelayOnly && (!st.HostBound || !st.ClientBound || direct) {
		a.writeProblem(ctx, probConflict, "the attempt does not need the relay: not introduced yet, or connected directly", nil)
		return
	}
	if !a.relayCap.take(p.Subject, time.Now()) {
		a.writeProblem(ctx, probQuotaExceeded, relayCapDetail, nil)
		return
	}
	a.sendRelay(ctx, &st, turncred.SideClient)
}

// sendRelay answers 200 with side's credential for the attempt st and
// whether it is relay-only.
func (a *API) sendRelay(ctx *fasthttp.RequestCtx, st *engine.AttemptStatus, side byte) {
	s := acquireBuf()
	defer releaseBuf(s)
	b := append(s.b[:0], '{')
	b = a.appendRelay(b, st.Attempt, side, st.ExpiresAt, time.Until(st.ExpiresAt))
	b = append(b, `,"relay_only":`...)
	b = strconv.AppendBool(b, st.RelayOnly)
	s.b = append(b, '}')
	sendJSON(ctx, fasthttp.StatusOK, s)
}
