package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

// Sentinel errors mirroring the contract's outcomes (docs/contracts/semantics.md#outcomes) and the
// SDK's own failures. Match them with errors.Is; the concrete errors
// (*APIError, *MediatorError) carry the details.
var (
	ErrNotFound           = errors.New("rendezvous: not found")
	ErrExpired            = errors.New("rendezvous: expired")
	ErrRevoked            = errors.New("rendezvous: revoked")
	ErrConflict           = errors.New("rendezvous: conflict")
	ErrReplayRejected     = errors.New("rendezvous: replay rejected")
	ErrCapacityExceeded   = errors.New("rendezvous: capacity exceeded")
	ErrQuotaExceeded      = errors.New("rendezvous: quota exceeded")
	ErrDraining           = errors.New("rendezvous: server draining")
	ErrServiceUnavailable = errors.New("rendezvous: service unavailable")
	// ErrListingFull: a join to a listing whose host reports it full
	// (problem listing_full).
	ErrListingFull = errors.New("rendezvous: listing full")

	ErrInvalidRequest = errors.New("rendezvous: invalid request")
	ErrUnauthorized   = errors.New("rendezvous: unauthorized")
	ErrForbidden      = errors.New("rendezvous: forbidden")

	// ErrIntroduceTimeout: the mediator did not introduce the other side
	// before the attempt's lifetime (or the caller's context) ended.
	ErrIntroduceTimeout = errors.New("rendezvous: no introduction before the attempt expired")
	// ErrPunchFailed: no candidate path confirmed in both directions within
	// the punch timeout (typically a symmetric NAT or a firewall).
	ErrPunchFailed = errors.New("rendezvous: hole punch failed")
	// ErrClosed: the Socket, Publisher or Joiner was closed.
	ErrClosed = errors.New("rendezvous: closed")
	// ErrLeaseLost: the listing's lease could not be kept (it expired,
	// was revoked or deleted); the Publisher has stopped.
	ErrLeaseLost = errors.New("rendezvous: lease lost")
)

// InputError is the typed error for invalid input (the field and why); a call
// that returns it sent nothing and changed nothing.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("rendezvous: invalid %s: %s", e.Field, e.Reason)
}

// checked turns the engine's validation error (the SDK checks input with the
// same rules as the server) into the SDK's own *InputError.
func checked(err error) error {
	var ie *engine.InputError
	if errors.As(err, &ie) {
		return &InputError{Field: ie.Field, Reason: ie.Reason}
	}
	return err
}

// ConfigError reports an unusable SDK configuration.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("rendezvous: invalid %s: %s", e.Field, e.Reason)
}

// APIError is an HTTP problem response (RFC 9457) from the server.
type APIError struct {
	Op     string // the SDK call, e.g. "create listing"
	Status int
	Code   string // the contract's code, e.g. "conflict"
	// Inferred is true when the answer carried no problem code and Code
	// was guessed from the status alone (e.g. a bare 429 from a proxy).
	// Callers that must tell a typed contract outcome from an untyped
	// status (the load tester's shed check) look at it.
	Inferred bool
	Title    string
	Detail   string
	// RetryAfter is the server's Retry-After, if it sent one.
	RetryAfter time.Duration
	// CurrentVersion is the lease version a 409 on renew carried (0 if none).
	CurrentVersion uint64
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("rendezvous: %s: HTTP %d %s", e.Op, e.Status, e.Code)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

var codeSentinels = map[string]error{
	"not_found":              ErrNotFound,
	"expired":                ErrExpired,
	"revoked":                ErrRevoked,
	"conflict":               ErrConflict,
	"replay_rejected":        ErrReplayRejected,
	"capacity_exceeded":      ErrCapacityExceeded,
	"quota_exceeded":         ErrQuotaExceeded,
	"draining":               ErrDraining,
	"service_unavailable":    ErrServiceUnavailable,
	"invalid_request":        ErrInvalidRequest,
	"payload_too_large":      ErrInvalidRequest,
	"unsupported_media_type": ErrInvalidRequest,
	"unauthorized":           ErrUnauthorized,
	"forbidden":              ErrForbidden,
	"relay_unavailable":      ErrRelayUnavailable,
	"listing_full":           ErrListingFull,
}

// Is maps the problem code to the matching sentinel.
func (e *APIError) Is(target error) bool {
	if s, ok := codeSentinels[e.Code]; ok && s == target {
		return true
	}
	// A quota is a kind of capacity refusal.
	return e.Code == "quota_exceeded" && target == ErrCapacityExceeded
}

// MediatorError is a STUN error response from the UDP mediator.
type MediatorError struct {
	Op     string // "presence", "bind"
	Code   int    // STUN ERROR-CODE, e.g. 404
	Reason string
}

func (e *MediatorError) Error() string {
	s := fmt.Sprintf("rendezvous: %s: mediator error %d %s", e.Op, e.Code, e.Reason)
	if o := mediatorOutcomes[e.Code]; o != "" {
		s += " (" + o + ")"
	}
	return s
}

// mediatorOutcomes names the contract outcomes a STUN code stands for
// (docs/contracts/semantics.md#outcomes), so a message says "revoked" or "draining", not only
// the code's generic reason phrase.
var mediatorOutcomes = map[int]string{
	400: "invalid request",
	401: "capability not accepted: unknown to this server",
	403: "revoked",
	404: "not found or expired",
	409: "conflict or replayed sequence",
	503: "draining or unavailable",
	508: "capacity exceeded",
}

// Is maps STUN error codes to sentinels per docs/contracts/semantics.md#outcomes: 404 covers
// NotFound and Expired, 503 covers Draining and ServiceUnavailable.
func (e *MediatorError) Is(target error) bool {
	switch e.Code {
	case 400:
		return target == ErrInvalidRequest
	case 401:
		return target == ErrUnauthorized
	case 403:
		return target == ErrRevoked
	case 404:
		return target == ErrNotFound || target == ErrExpired
	case 409:
		return target == ErrConflict || target == ErrReplayRejected
	case 508:
		return target == ErrCapacityExceeded
	case 503:
		return target == ErrDraining || target == ErrServiceUnavailable
	}
	return false
}

// ProtocolError reports a server answer the SDK cannot understand (a
// malformed body, a missing field). It indicates a server bug or a wrong
// endpoint, not a contract outcome.
type ProtocolError struct {
	Op     string
	Reason string
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("rendezvous: %s: unexpected answer: %s", e.Op, e.Reason)
}
