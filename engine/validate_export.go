package engine

import "time"

// The checks a Store makes before its commit, exported so a store outside
// this package (engine/redisstore) rejects exactly the same input with the
// same *InputError before anything reaches its server.

// ValidateCreateListing checks a registration (tenant, owner, idempotency
// key, document size, spec).
func ValidateCreateListing(cmd *CreateListing) error { return validateCreateListing(cmd) }

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
	return nil
}

// ErrCurrentPlayers is the InputError of a renewal whose current_players
// exceeds the listing's max_players. Callers must not modify it.
var ErrCurrentPlayers error = errPlayers

// ValidateCreateAttempt checks a join (tenant, client, idempotency key,
// protocol version).
func ValidateCreateAttempt(cmd *CreateAttempt) error {
	if err := cmd.Tenant.Validate(); err != nil {
		return err
	}
	if err := cmd.Client.Validate(); err != nil {
		return err
	}
	if err := ValidateIdempotencyKey(cmd.IdempotencyKey); err != nil {
		return err
	}
	if cmd.ProtocolVersion == 0 {
		return errProtocol
	}
	return nil
}

// ValidateBind checks an attempt bind's role and endpoints.
func ValidateBind(cmd *BindAttempt) error { return validateBind(cmd) }

// ValidatePresence checks a presence refresh's endpoints and sequence.
func ValidatePresence(cmd *BindPresence) error { return validatePresence(cmd) }

// ValidateBrowse checks a browse query.
func ValidateBrowse(q *Browse) error { return validBrowse(q) }

// ValidateRevocation checks a revocation's subject and ttl.
func ValidateRevocation(subject Subject, ttl time.Duration) error {
	return validateRevocation(subject, ttl)
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

// ValidateReport checks an outcome report's role and path.
func ValidateReport(r *PunchReport) error { return validateReport(r) }
