package httpapi

import (
	"errors"
	"strconv"
	"time"

	"github.com/rendezvous/rendezvous/engine"
	"github.com/valyala/fasthttp"
)

// problemKind names one RFC 9457 problem the API answers (docs/contracts/http.md#errors).
type problemKind uint8

const (
	probInvalidRequest problemKind = iota
	probUnauthorized
	probForbidden
	probRevoked
	probNotFound
	probMethodNotAllowed
	probPayloadTooLarge
	probUnsupportedMediaType
	probExpired
	probConflict
	probReplayRejected
	probQuotaExceeded
	probCapacityExceeded
	probDraining
	probServiceUnavailable
	probHeadersTooLarge
	probRequestTimeout
	probInternal
	probNotReloadable
	probPrincipalsInvalid
	probRelayUnavailable
	probListingFull
	numProblems
)

var problems = [numProblems]struct {
	status int
	code   string
	title  string
}{
	probInvalidRequest:       {400, "invalid_request", "The request is invalid"},
	probUnauthorized:         {401, "unauthorized", "Authentication is required"},
	probForbidden:            {403, "forbidden", "The principal may not do this"},
	probRevoked:              {403, "revoked", "The principal is revoked"},
	probNotFound:             {404, "not_found", "Not found"},
	probMethodNotAllowed:     {405, "method_not_allowed", "Method not allowed"},
	probPayloadTooLarge:      {413, "payload_too_large", "The request body is larger than 16 KiB"},
	probUnsupportedMediaType: {415, "unsupported_media_type", "Content-Type must be application/json"},
	probExpired:              {410, "expired", "The resource has expired"},
	probConflict:             {409, "conflict", "Conflict"},
	probReplayRejected:       {409, "replay_rejected", "Replay rejected"},
	probQuotaExceeded:        {429, "quota_exceeded", "A policy quota is exhausted"},
	probCapacityExceeded:     {503, "capacity_exceeded", "A capacity ceiling is reached"},
	probDraining:             {503, "draining", "The service is draining"},
	probServiceUnavailable:   {503, "service_unavailable", "The service is unavailable"},
	probHeadersTooLarge:      {431, "headers_too_large", "The request headers are too large"},
	probRequestTimeout:       {408, "request_timeout", "The request was not received in time"},
	probInternal:             {500, "internal_error", "Internal error"},
	probNotReloadable:        {409, "not_reloadable", "The server has no principals file to reload"},
	probPrincipalsInvalid:    {422, "principals_invalid", "The principals file was refused; the previous principals stay in force"},
	probRelayUnavailable:     {409, "relay_unavailable", "The relay fallback is not enabled on this server"},
	probListingFull:          {409, "listing_full", "The listing is full"},
}

// Retry-After values (seconds) on 429 and 503 answers.
const (
	retryAfterQuota       = "5"
	retryAfterCapacity    = "1"
	retryAfterUnavailable = "5"
)

const problemType = "urn:rendezvous:problem:"

var (
	ctProblem = []byte("application/problem+json")
	ctJSON    = []byte("application/json")
)

// writeProblem answers with an application/problem+json document. detail
// must never hold a secret: it names fields and reasons only. extra, if not
// nil, appends further members (each starting with a comma).
func (a *API) writeProblem(ctx *fasthttp.RequestCtx, k problemKind, detail string, extra func([]byte) []byte) {
	p := &problems[k]
	ctx.Response.ResetBody()
	ctx.SetStatusCode(p.status)
	ctx.Response.Header.SetContentTypeBytes(ctProblem)
	switch k {
	case probQuotaExceeded:
		ctx.Response.Header.Set("Retry-After", retryAfterQuota)
	case probCapacityExceeded:
		ctx.Response.Header.Set("Retry-After", retryAfterCapacity)
	case probDraining:
		ctx.Response.Header.Set("Retry-After", a.drainRetryAfter)
	case probServiceUnavailable:
		ctx.Response.Header.Set("Retry-After", retryAfterUnavailable)
	case probUnauthorized:
		ctx.Response.Header.Set("WWW-Authenticate", `Bearer realm="rendezvous"`)
	}
	buf := acquireBuf()
	b := append(buf.b[:0], `{"type":"`...)
	b = append(b, problemType...)
	b = append(b, p.code...)
	b = append(b, `","title":`...)
	b = appendString(b, p.title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(p.status), 10)
	b = append(b, `,"code":"`...)
	b = append(b, p.code...)
	b = append(b, `","detail":`...)
	if detail == "" {
		detail = p.title
	}
	b = appendString(b, detail)
	if extra != nil {
		b = extra(b)
	}
	b = append(b, '}')
	ctx.SetBody(b)
	buf.b = b
	releaseBuf(buf)
}

// writeInputError answers 400 invalid_request naming the field.
func (a *API) writeInputError(ctx *fasthttp.RequestCtx, err error) {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		a.writeProblem(ctx, probInvalidRequest, ie.Field+": "+ie.Reason, nil)
		return
	}
	a.writeProblem(ctx, probInvalidRequest, "", nil)
}

// writeStoreError answers a non-nil error from a store transition: invalid
// input is 400; anything else (a cancelled context) is 503.
func (a *API) writeStoreError(ctx *fasthttp.RequestCtx, err error) {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		a.writeInputError(ctx, err)
		return
	}
	if n, ok := a.storeErrLog.allow(); ok {
		a.log.Warn("store transitions failed", "error", err.Error(), "failures", n)
	}
	a.writeProblem(ctx, probServiceUnavailable, "", nil)
}

// storeAnswered answers what a store transition of o, begun at start,
// cannot go on from: a non-nil err (writeStoreError) or an outcome other
// than Success (writeOutcome, with no extra members). It counts the
// outcome of every answer the store gave and reports whether r is a success
// the caller renders.
func (a *API) storeAnswered(ctx *fasthttp.RequestCtx, o op, r engine.Result, err error, start time.Time) bool {
	if err != nil {
		a.writeStoreError(ctx, err)
		return false
	}
	a.metrics.outcome(o, r.Outcome, start)
	if !r.OK() {
		a.writeOutcome(ctx, r, nil)
		return false
	}
	return true
}

// writeOutcome answers a store outcome other than Success (docs/contracts/semantics.md#outcomes).
func (a *API) writeOutcome(ctx *fasthttp.RequestCtx, r engine.Result, extra func([]byte) []byte) {
	switch r.Outcome {
	case engine.NotFound:
		a.writeProblem(ctx, probNotFound, "", nil)
	case engine.Expired:
		a.writeProblem(ctx, probExpired, "", nil)
	case engine.Revoked:
		a.writeProblem(ctx, probRevoked, "", nil)
	case engine.Conflict:
		a.writeProblem(ctx, probConflict, "", extra)
	case engine.ReplayRejected:
		a.writeProblem(ctx, probReplayRejected, "", nil)
	case engine.CapacityExceeded:
		if r.Quota() {
			a.writeProblem(ctx, probQuotaExceeded, "quota "+r.Pool.String()+" is exhausted", nil)
		} else {
			a.writeProblem(ctx, probCapacityExceeded, "pool "+r.Pool.String()+" is full", nil)
		}
	case engine.Full:
		a.writeProblem(ctx, probListingFull, "the host reports current_players = max_players", nil)
	case engine.Draining:
		a.writeProblem(ctx, probDraining, "", nil)
	case engine.ServiceUnavailable:
		if r.NotReplicated {
			a.writeProblem(ctx, probServiceUnavailable, notReplicatedDetail, appendNotReplicated)
			ctx.Response.Header.Set("Retry-After", retryAfterNotReplicated)
			return
		}
		a.writeProblem(ctx, probServiceUnavailable, "", nil)
	default:
		a.log.Error("BUG: unexpected store outcome", "outcome", r.Outcome.String())
		a.writeProblem(ctx, probInternal, "", nil)
	}
}
