package httpapi

import (
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// attemptStatus answers GET /v1/join-attempts/{attempt_id}: the attempt's
// state and reason, live or for a while after it ended, to the client that
// created it or the owner of its listing; 404 for anyone else. It reports
// whether its read decided the caller's revocation (serveOp).
func (a *API) attemptStatus(ctx *fasthttp.RequestCtx, p *Principal, id []byte) bool {
	aid, ok := a.parseID(ctx, id, "attempt_id")
	if !ok {
		return false
	}
	start := time.Now()
	st, r, err := a.attemptStatusFor(engine.GetAttempt{
		Tenant: p.Tenant, Subject: p.Subject, Attempt: engine.AttemptID{UUID: aid},
	})
	if !a.storeAnswered(ctx, opGetAttempt, r, err, start) {
		return a.decided(opGetAttempt, r, err)
	}
	s := acquireBuf()
	defer releaseBuf(s)
	b := append(s.b[:0], `{"attempt_id":`...)
	b = appendUUID(b, st.Attempt.UUID)
	b = append(b, `,"listing_id":`...)
	b = appendUUID(b, st.Listing.UUID)
	b = append(b, `,"state":`...)
	b = appendString(b, st.State.String())
	b = append(b, `,"reason":`...)
	b = appendString(b, st.Reason.String())
	b = append(b, `,"relay_only":`...)
	b = strconv.AppendBool(b, st.RelayOnly)
	b = append(b, `,"expires_at":`...)
	b = appendTime(b, st.ExpiresAt)
	for _, f := range [...]struct {
		name string
		v    bool
	}{{"host_bound", st.HostBound}, {"client_bound", st.ClientBound}, {"host_relayed", st.HostRelayed}, {"client_relayed", st.ClientRelayed}} {
		b = append(b, ",\""...)
		b = append(b, f.name...)
		b = append(b, "\":"...)
		b = strconv.AppendBool(b, f.v)
	}
	b = appendOutcome(b, "host_outcome", st.HostOutcome)
	b = appendOutcome(b, "client_outcome", st.ClientOutcome)
	s.b = append(b, '}')
	sendJSON(ctx, fasthttp.StatusOK, s)
	return a.decided(opGetAttempt, r, nil)
}

// appendOutcome appends ,"name":{"path":…,"connect_ms":N} for a reported
// outcome, nothing otherwise.
func appendOutcome(b []byte, name string, o engine.PunchOutcome) []byte {
	if !o.Reported() {
		return b
	}
	b = append(b, ",\""...)
	b = append(b, name...)
	b = append(b, `":{"path":`...)
	b = appendString(b, o.Path.String())
	b = append(b, `,"connect_ms":`...)
	b = strconv.AppendUint(b, uint64(o.ConnectMillis), 10)
	return append(b, '}')
}
