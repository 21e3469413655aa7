package stun

// Error is the typed error of this package. Every error Parse or a Builder
// returns is one of the sentinel values below, so callers can compare with ==
// or errors.Is and use Reason as a metrics label; returning one never allocates.
type Error struct{ Reason string }

func (e *Error) Error() string { return "stun: " + e.Reason }

// Parse errors: each makes the datagram malformed (docs/contracts/udp.md#acceptance).
var (
	ErrTooShort         = &Error{"too_short"}
	ErrTooLong          = &Error{"too_long"}
	ErrNotSTUN          = &Error{"not_stun"} // top bits or magic cookie
	ErrLength           = &Error{"bad_length"}
	ErrAttrOverrun      = &Error{"attr_overrun"}
	ErrAttrValue        = &Error{"bad_attr_value"}
	ErrDuplicate        = &Error{"duplicate_attr"}
	ErrFingerprint      = &Error{"bad_fingerprint"}
	ErrAfterFingerprint = &Error{"attr_after_fingerprint"}
	ErrTooManyAttrs     = &Error{"too_many_attrs"}
)

// Builder errors.
var (
	ErrBufferFull = &Error{"buffer_full"}
	ErrBadValue   = &Error{"bad_value"}
)
