package engine

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// InputError is the typed error for invalid input: the field and why. A
// transition that returns it has changed nothing.
type InputError struct {
	Field  string
	Reason string
}

func (e *InputError) Error() string { return fmt.Sprintf("invalid %s: %s", e.Field, e.Reason) }

func inputErr(field, reason string) error { return &InputError{Field: field, Reason: reason} }

// Tenant is (game_id, environment_id); every listing, attempt, quota and
// browse is scoped to one.
type Tenant struct {
	Game, Env string
}

// ValidateTenant checks each part is 1-64 chars of [a-z0-9._-].
func (t Tenant) Validate() error {
	if !isTenantPart(t.Game) {
		return inputErr("game_id", "must be 1-64 characters of [a-z0-9._-]")
	}
	if !isTenantPart(t.Env) {
		return inputErr("environment_id", "must be 1-64 characters of [a-z0-9._-]")
	}
	return nil
}

func isTenantPart(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Subject names an authenticated principal.
type Subject string

// Validate checks 1-256 bytes of valid UTF-8 without control characters.
func (s Subject) Validate() error {
	if len(s) < 1 || len(s) > 256 || !utf8.ValidString(string(s)) {
		return inputErr("subject", "must be 1-256 characters of valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return inputErr("subject", "must not contain control characters")
		}
	}
	return nil
}

// ValidateIdempotencyKey checks 1-128 visible ASCII characters.
func ValidateIdempotencyKey(k string) error {
	if len(k) < 1 || len(k) > 128 {
		return inputErr("Idempotency-Key", "must be 1-128 visible ASCII characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return inputErr("Idempotency-Key", "must be 1-128 visible ASCII characters")
		}
	}
	return nil
}
