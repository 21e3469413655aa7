package main

// Kind names one kind of request the load tester offers. Kinds index fixed
// arrays, so recording a sample never allocates.
type Kind uint8

const (
	KindCreate   Kind = iota // POST /v1/listings
	KindRenew                // PUT /v1/listings/{id}/lease
	KindBrowse               // GET /v1/listings
	KindGet                  // GET /v1/listings/{id}
	KindJoin                 // POST /v1/listings/{id}/join-attempts
	KindPresence             // UDP presence refresh (Binding, p:)
	KindBind                 // UDP attempt bind (Binding, h: or c:)
	KindPlain                // UDP plain Binding without USERNAME
	KindDelete               // DELETE /v1/listings/{id}
	// KindLivez is GET /livez, which no store call answers: the latency
	// floor of the generator, the HTTP stack and the machine, measured in
	// the same run as the kinds that reach the store.
	KindLivez
	// KindBrowseFiltered is GET /v1/listings with "not full, mode = m,
	// most players first", following next_cursor half the time.
	KindBrowseFiltered
	KindQuickJoin // POST /v1/quick-join (not full, mode = m)
	numKinds
)

var kindNames = [numKinds]string{"create", "renew", "browse", "get", "join", "presence", "bind", "plain", "delete", "livez",
	"browse_filtered", "quick_join"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// parseKind maps a scenario name to its Kind.
func parseKind(s string) (Kind, bool) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), true
		}
	}
	return 0, false
}

// Code is the observed outcome of one request, transport failures included.
type Code uint8

const (
	CodeOK           Code = iota
	CodeCapacity          // 503 capacity_exceeded
	CodeQuota             // 429 quota_exceeded
	CodeStun508           // STUN 508 (either pool or quota)
	CodeNotFound          // 404 (HTTP or STUN)
	CodeExpired           // 410
	CodeConflict          // 409 (conflict or replay_rejected)
	CodeRevoked           // 403 revoked
	CodeDraining          // 503 draining
	CodeUnavailable       // 503 service_unavailable
	CodeBadRequest        // 400, 413, 415 and STUN 400/420
	CodeUnauthorized      // 401
	CodeForbidden         // 403 other than revoked
	CodeOtherStatus       // any other status or STUN error
	CodeTimeout           // no answer in time
	CodeTransport         // connection or socket error
	CodeBadSignature      // a STUN answer that must be signed is not, or its integrity fails
	CodeUntyped           // an HTTP error without a problem code the contract knows
	CodeFull              // 409 listing_full
	numCodes
)

var codeNames = [numCodes]string{
	"ok", "capacity_exceeded", "quota_exceeded", "stun_508", "not_found", "expired",
	"conflict", "revoked", "draining", "service_unavailable", "bad_request",
	"unauthorized", "forbidden", "other_status", "timeout", "transport", "bad_signature", "untyped", "listing_full",
}

func (c Code) String() string {
	if c < numCodes {
		return codeNames[c]
	}
	return "unknown"
}

// Class groups codes for the progress line and the charts.
type Class uint8

const (
	ClassOK Class = iota
	ClassShed
	ClassError
	numClasses
)

var classNames = [numClasses]string{"ok", "shed", "error"}

func (c Class) String() string { return classNames[c] }

// Class reports whether c is a success, a typed shed answer or an error.
func (c Code) Class() Class {
	switch c {
	case CodeOK:
		return ClassOK
	case CodeCapacity, CodeQuota, CodeStun508:
		return ClassShed
	}
	return ClassError
}

// httpCode maps an HTTP status and problem code to a Code.
func httpCode(status int, problem string) Code {
	switch {
	case status >= 200 && status < 300:
		return CodeOK
	case status == 503 && problem == "capacity_exceeded":
		return CodeCapacity
	case status == 429 && problem == "quota_exceeded":
		return CodeQuota
	case status == 503 && problem == "draining":
		return CodeDraining
	case status == 503:
		return CodeUnavailable
	case status == 404:
		return CodeNotFound
	case status == 410:
		return CodeExpired
	case status == 409 && problem == "listing_full":
		return CodeFull
	case status == 409:
		return CodeConflict
	case status == 403 && problem == "revoked":
		return CodeRevoked
	case status == 403:
		return CodeForbidden
	case status == 401:
		return CodeUnauthorized
	case status == 400 || status == 413 || status == 415:
		return CodeBadRequest
	}
	return CodeOtherStatus
}

// stunCode maps a STUN ERROR-CODE (0 for a success response) to a Code.
func stunCode(errCode int) Code {
	switch errCode {
	case 0:
		return CodeOK
	case 508:
		return CodeStun508
	case 404:
		return CodeNotFound
	case 409:
		return CodeConflict
	case 403:
		return CodeRevoked
	case 401:
		return CodeUnauthorized
	case 400, 420:
		return CodeBadRequest
	case 503:
		return CodeUnavailable
	}
	return CodeOtherStatus
}
