package client

import (
	"encoding/base64"
	"fmt"

	"github.com/rendezvous/rendezvous/engine"
)

// Identifiers of the contract, each its own type so one kind cannot be
// passed where another is expected. Their text form (String, MarshalText,
// and so JSON) is the lowercase canonical UUID; Parse* and UnmarshalText
// accept only the 8-4-4-4-12 hex form, in any case. The zero value names
// nothing (IsZero).
type (
	// ListingID names a listing (docs/contracts/http.md#create-a-listing).
	ListingID [16]byte
	// AttemptID names a join attempt (docs/contracts/http.md#create-a-join-attempt).
	AttemptID [16]byte
	// LeaseID names a listing's lease (docs/contracts/http.md#create-a-listing).
	LeaseID [16]byte
	// Handle names a presence binding or a join attempt on the UDP side;
	// Introduction.Attempt is the attempt's handle.
	Handle [16]byte
)

// ParseListingID parses a listing ID; anything else is an *InputError.
func ParseListingID(s string) (ListingID, error) {
	u, err := parseUUID("listing_id", s)
	return ListingID(u), err
}

// ParseAttemptID parses an attempt ID; anything else is an *InputError.
func ParseAttemptID(s string) (AttemptID, error) {
	u, err := parseUUID("attempt_id", s)
	return AttemptID(u), err
}

func (id ListingID) String() string               { return engine.UUID(id).String() }
func (id ListingID) IsZero() bool                 { return id == ListingID{} }
func (id ListingID) MarshalText() ([]byte, error) { return engine.UUID(id).AppendText(nil), nil }
func (id *ListingID) UnmarshalText(b []byte) error {
	return unmarshalUUID("listing_id", (*[16]byte)(id), b)
}

func (id AttemptID) String() string               { return engine.UUID(id).String() }
func (id AttemptID) IsZero() bool                 { return id == AttemptID{} }
func (id AttemptID) MarshalText() ([]byte, error) { return engine.UUID(id).AppendText(nil), nil }
func (id *AttemptID) UnmarshalText(b []byte) error {
	return unmarshalUUID("attempt_id", (*[16]byte)(id), b)
}

func (id LeaseID) String() string               { return engine.UUID(id).String() }
func (id LeaseID) IsZero() bool                 { return id == LeaseID{} }
func (id LeaseID) MarshalText() ([]byte, error) { return engine.UUID(id).AppendText(nil), nil }
func (id *LeaseID) UnmarshalText(b []byte) error {
	return unmarshalUUID("lease_id", (*[16]byte)(id), b)
}

func (h Handle) String() string                { return engine.UUID(h).String() }
func (h Handle) IsZero() bool                  { return h == Handle{} }
func (h Handle) MarshalText() ([]byte, error)  { return engine.UUID(h).AppendText(nil), nil }
func (h *Handle) UnmarshalText(b []byte) error { return unmarshalUUID("handle", (*[16]byte)(h), b) }

func parseUUID[T ~string | ~[]byte](field string, s T) ([16]byte, error) {
	u, ok := engine.ParseUUID(s)
	if !ok {
		return u, &InputError{Field: field, Reason: "must be a UUID in 8-4-4-4-12 hex form"}
	}
	return u, nil
}

func unmarshalUUID(field string, dst *[16]byte, b []byte) error {
	u, err := parseUUID(field, b)
	if err == nil {
		*dst = u
	}
	return err
}

// engine converts the handle for the STUN codec.
func (h Handle) engine() engine.Handle { return engine.Handle{UUID: engine.UUID(h)} }

// Capability is a 32-byte secret proving the right to act on one lease,
// presence binding or attempt (docs/contracts/semantics.md#capabilities). It prints as "[REDACTED]"
// with every fmt verb and marshals as "[REDACTED]", so it cannot leak
// through a log line or a JSON dump by accident.
type Capability [32]byte

func (Capability) String() string               { return "[REDACTED]" }
func (Capability) GoString() string             { return "[REDACTED]" }
func (Capability) Format(f fmt.State, _ rune)   { f.Write([]byte("[REDACTED]")) }
func (Capability) MarshalText() ([]byte, error) { return []byte("[REDACTED]"), nil }

// token is the wire form (base64url, no padding) sent to the server.
func (c *Capability) token() string { return base64.RawURLEncoding.EncodeToString(c[:]) }

// engine views the capability as the codec's type (same bytes, no copy).
func (c *Capability) engine() *engine.Capability { return (*engine.Capability)(c) }

func parseCapability(s string) (Capability, bool) {
	c, ok := engine.ParseToken(s)
	return Capability(c), ok
}
