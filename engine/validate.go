package engine

import (
	"net/netip"
	"time"
)

// The checks a Store makes before its commit. Every store (engine/memstore,
// engine/redisstore) calls them, so each rejects exactly the same input
// with the same *InputError before anything reaches its state or its
// server.

// Fixed input errors are shared values so that rejecting bad input on the
// per-datagram paths does not allocate. Callers must not modify them.
var (
	errPublic          = &InputError{Field: "public", Reason: "must be a valid address with a non-zero port"}
	errLocal           = &InputError{Field: "local", Reason: "must be absent or a valid address with a non-zero port"}
	errRole            = &InputError{Field: "role", Reason: "must be host or client"}
	errRelayed         = &InputError{Field: "relayed", Reason: "must be absent or a valid address with a non-zero port"}
	errPath            = &InputError{Field: "path", Reason: "must be direct, relayed or failed"}
	errOpKind          = &InputError{Field: "kind", Reason: "must be OpPresence, OpBindAttempt or OpOutcome"}
	errProtocol        = &InputError{Field: "protocol_version", Reason: "must be 1..4294967295"}
	errLimit           = &InputError{Field: "limit", Reason: "must be 1..100"}
	errRegion          = &InputError{Field: "region", Reason: "must be 1-32 characters of [a-z0-9-]"}
	errPlayers         = &InputError{Field: "current_players", Reason: "must be 0..max_players"}
	errRevocationTTL   = &InputError{Field: "ttl_s", Reason: "must be 1..600 seconds"}
	errDocTooLarge     = &InputError{Field: "doc", Reason: "must be at most 64 KiB"}
	errSeq             = &InputError{Field: "seq", Reason: "must be at most 2^53-1"}
	errReplayNamespace = &InputError{Field: "namespace", Reason: "must be 1-64 bytes"}
	errReplayKey       = &InputError{Field: "key", Reason: "must be 1-128 bytes"}
	errReplayLifetime  = &InputError{Field: "lifetime", Reason: "must be 0 (the replay lifetime) or positive and at most the replay lifetime"}
	// Indexed attributes, and the filters that compare with them: these
	// name "attr", the query parameters' prefix, with the same reasons.
	errAttrCount    = &InputError{Field: "attributes", Reason: "at most 8 entries"}
	errAttrName     = &InputError{Field: "attributes", Reason: "names must be 1-16 characters of [a-z0-9_] starting with a letter"}
	errAttrOrder    = &InputError{Field: "attributes", Reason: "names must be unique and sorted"}
	errAttrString   = &InputError{Field: "attributes", Reason: "string values must be 1-32 bytes of UTF-8 without control characters or '|'"}
	errAttrNumber   = &InputError{Field: "attributes", Reason: "numbers must be integers in -(2^53-1)..2^53-1"}
	errOrder        = &InputError{Field: "order", Reason: "must be id, free_slots, current_players or created_at, optionally with a leading -"}
	errMinFree      = &InputError{Field: "min_free_slots", Reason: "must be 0..1024"}
	errPlayersRange = &InputError{Field: "players", Reason: "min_players and max_players must be 0..1024"}
	errFilterCount  = &InputError{Field: "attr", Reason: "at most 8 attribute filters"}
	errFilterValues = &InputError{Field: "attr", Reason: "a one-of filter takes 1-8 values"}
	errFilterOp     = &InputError{Field: "attr", Reason: "comparisons are eq, ne, lt, le, gt, ge"}
	errFilterName   = &InputError{Field: "attr", Reason: errAttrName.Reason}
	errFilterString = &InputError{Field: "attr", Reason: errAttrString.Reason}
	errFilterNumber = &InputError{Field: "attr", Reason: errAttrNumber.Reason}
)

// ErrCurrentPlayers is the InputError of a renewal whose current_players
// exceeds the listing's max_players. Callers must not modify it.
var ErrCurrentPlayers error = errPlayers

// ErrOpKind is the InputError of a batched Op whose Kind is none of
// OpPresence, OpBindAttempt and OpOutcome (set in Op.Err). Callers must not
// modify it.
var ErrOpKind error = errOpKind

// MaxDoc bounds CreateListing.Doc.
const MaxDoc = 64 << 10

// MaxPresenceSeq is the highest presence sequence accepted; a higher one is
// bad input (a signed 400 on the wire) and is never recorded. A listing's
// sequence may only rise, so a recorded value near 2^64 would lock its host
// out for the listing's whole life; with this bound a value a buggy host
// sends (a negative number as unsigned, random bits) is refused instead,
// while a counter from 1 at one refresh a millisecond needs 285,000 years
// to reach it. 2^53-1 is also the largest integer every JSON and JavaScript
// SDK represents exactly, and Unix time in milliseconds or microseconds
// fits.
const MaxPresenceSeq = 1<<53 - 1

// Replay ticket limits (docs/contracts/semantics.md#one-time-tickets).
const (
	MaxReplayNamespace = 64
	MaxReplayKey       = 128
)

// zeroAddrPort is the absent endpoint: a Local left unset.
var zeroAddrPort netip.AddrPort

// validEndpoints checks an observed public endpoint and an optional local one.
func validEndpoints(public, local netip.AddrPort) error {
	if !public.IsValid() || public.Port() == 0 {
		return errPublic
	}
	if local != zeroAddrPort && (!local.IsValid() || local.Port() == 0) {
		return errLocal
	}
	return nil
}

// ValidatePresence checks a presence refresh's endpoints and sequence (Seq
// 0 is not an input error but stale: Conflict, docs/contracts/udp.md#presence-refresh).
func ValidatePresence(cmd *BindPresence) error {
	if cmd.Seq > MaxPresenceSeq {
		return errSeq
	}
	return validEndpoints(cmd.Public, cmd.Local)
}

// validRegion reports whether r is 1-32 characters of [a-z0-9-].
func validRegion(r string) bool {
	return len(r) >= 1 && len(r) <= MaxRegionLen && allBytes(r, isRegionByte)
}

// validateCreation checks what every creation names: the tenant, the
// subject it is created for (a listing's owner, an attempt's client) and
// its idempotency key.
func validateCreation(t Tenant, subject Subject, idempotencyKey string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := subject.Validate(); err != nil {
		return err
	}
	return ValidateIdempotencyKey(idempotencyKey)
}

// ValidateCreateListing checks a registration (tenant, owner, idempotency
// key, document size, spec).
func ValidateCreateListing(cmd *CreateListing) error {
	if err := validateCreation(cmd.Tenant, cmd.Owner, cmd.IdempotencyKey); err != nil {
		return err
	}
	if len(cmd.Doc) > MaxDoc {
		return errDocTooLarge
	}
	return cmd.Spec.Validate()
}

// ValidateRenew checks a renewal's tenant, owner and current_players
// against MaxPlayers; the listing's own max_players is checked at commit
// (ErrCurrentPlayers).
func ValidateRenew(cmd *RenewLease) error {
	if err := cmd.Tenant.Validate(); err != nil {
		return err
	}
	if err := cmd.Owner.Validate(); err != nil {
		return err
	}
	if cmd.CurrentPlayers > MaxPlayers {
		return errPlayers
	}
	if cmd.SetAttributes {
		return cmd.Attributes.Validate()
	}
	return nil
}

// ValidateBrowse checks a browse query.
func ValidateBrowse(q *Browse) error {
	if err := q.Tenant.Validate(); err != nil {
		return err
	}
	if q.ProtocolVersion == 0 {
		return errProtocol
	}
	if q.Region != "" && !validRegion(q.Region) {
		return errRegion
	}
	if q.Limit < 1 || q.Limit > BrowsePageMax {
		return errLimit
	}
	return q.validateQuery()
}

// ValidateCreateAttempt checks a join (tenant, client, idempotency key,
// protocol version).
func ValidateCreateAttempt(cmd *CreateAttempt) error {
	if err := validateCreation(cmd.Tenant, cmd.Client, cmd.IdempotencyKey); err != nil {
		return err
	}
	if cmd.ProtocolVersion == 0 {
		return errProtocol
	}
	return nil
}

// ValidateBind checks an attempt bind's role and endpoints.
func ValidateBind(cmd *BindAttempt) error {
	if cmd.Role != RoleHost && cmd.Role != RoleClient {
		return errRole
	}
	if err := validEndpoints(cmd.Public, cmd.Local); err != nil {
		return err
	}
	if cmd.Relayed != zeroAddrPort && (!cmd.Relayed.IsValid() || cmd.Relayed.Port() == 0) {
		return errRelayed
	}
	return nil
}

// ValidateReport checks an outcome report's role and path.
func ValidateReport(r *PunchReport) error {
	if r.Role != RoleHost && r.Role != RoleClient {
		return errRole
	}
	if !r.Path.Valid() {
		return errPath
	}
	return nil
}

// ValidateGetAttempt checks a status query's tenant and subject.
func ValidateGetAttempt(q *GetAttempt) error {
	if err := q.Tenant.Validate(); err != nil {
		return err
	}
	return q.Subject.Validate()
}

// ValidateRevocation checks a revocation's subject and ttl.
func ValidateRevocation(subject Subject, ttl time.Duration) error {
	if err := subject.Validate(); err != nil {
		return err
	}
	if ttl < time.Second || ttl > MaxRevocationTTL {
		return errRevocationTTL
	}
	return nil
}

// ValidateReplay checks a one-time ticket and returns its lifetime (0 means
// replayTTL, the configured replay lifetime).
func ValidateReplay(cmd *ConsumeReplay, replayTTL time.Duration) (time.Duration, error) {
	if len(cmd.Namespace) < 1 || len(cmd.Namespace) > MaxReplayNamespace {
		return 0, errReplayNamespace
	}
	if len(cmd.Key) < 1 || len(cmd.Key) > MaxReplayKey {
		return 0, errReplayKey
	}
	life := cmd.Lifetime
	if life == 0 {
		life = replayTTL
	}
	if life < 0 || life > replayTTL {
		return 0, errReplayLifetime
	}
	return life, nil
}

// ValidateQuickJoin checks a quick join: its join as any join, its query
// as any browse (Limit, Order, Desc and the continuation are ignored), and
// that both name the same tenant and protocol version.
func ValidateQuickJoin(cmd *QuickJoin) error {
	if err := ValidateCreateAttempt(&cmd.Join); err != nil {
		return err
	}
	q := Browse{Tenant: cmd.Query.Tenant, ProtocolVersion: cmd.Query.ProtocolVersion, Region: cmd.Query.Region, Limit: 1, Filter: cmd.Query.Filter}
	if err := ValidateBrowse(&q); err != nil {
		return err
	}
	if q.Tenant != cmd.Join.Tenant || q.ProtocolVersion != cmd.Join.ProtocolVersion {
		return errQuickJoinScope
	}
	return nil
}

var errQuickJoinScope = &InputError{Field: "protocol_version", Reason: "the query and the join must name the same tenant and protocol version"}
