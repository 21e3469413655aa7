package refstore

import (
	"net/netip"
	"time"

	"github.com/rendezvous/rendezvous/engine"
)

func inputErr(field, reason string) error { return &engine.InputError{Field: field, Reason: reason} }

func validEndpoints(public, local netip.AddrPort) error {
	if !public.IsValid() || public.Port() == 0 {
		return inputErr("public", "must be a valid address with a non-zero port")
	}
	if local != (netip.AddrPort{}) && (!local.IsValid() || local.Port() == 0) {
		return inputErr("local", "must be absent or a valid address with a non-zero port")
	}
	return nil
}

func validRegion(r string) bool {
	if len(r) < 1 || len(r) > engine.MaxRegionLen {
		return false
	}
	for i := 0; i < len(r); i++ {
		c := r[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validateCreation checks what a listing's and an attempt's creation both
// name: the tenant, the owner or client, the idempotency key.
func validateCreation(t engine.Tenant, subject engine.Subject, idempotencyKey string) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := subject.Validate(); err != nil {
		return err
	}
	return engine.ValidateIdempotencyKey(idempotencyKey)
}

func validateCreate(cmd *engine.CreateListing) error {
	if err := validateCreation(cmd.Tenant, cmd.Owner, cmd.IdempotencyKey); err != nil {
		return err
	}
	if len(cmd.Doc) > engine.MaxDoc {
		return inputErr("doc", "must be at most 64 KiB")
	}
	return cmd.Spec.Validate()
}

func validateAttempt(cmd *engine.CreateAttempt) error {
	if err := validateCreation(cmd.Tenant, cmd.Client, cmd.IdempotencyKey); err != nil {
		return err
	}
	if cmd.ProtocolVersion == 0 {
		return inputErr("protocol_version", "must be 1..4294967295")
	}
	return nil
}

func validateBind(cmd *engine.BindAttempt) error {
	if cmd.Role != engine.RoleHost && cmd.Role != engine.RoleClient {
		return inputErr("role", "must be host or client")
	}
	if err := validEndpoints(cmd.Public, cmd.Local); err != nil {
		return err
	}
	if cmd.Relayed.IsValid() && cmd.Relayed.Port() == 0 || !cmd.Relayed.IsValid() && cmd.Relayed != (netip.AddrPort{}) {
		return inputErr("relayed", "must be absent or a valid address with a non-zero port")
	}
	return nil
}

// validatePresence checks the endpoints and the sequence bound; Seq 0 is not
// an input error but a stale sequence (Conflict, docs/contracts/udp.md#presence-refresh).
func validatePresence(cmd *engine.BindPresence) error {
	if cmd.Seq > engine.MaxPresenceSeq {
		return inputErr("seq", "must be at most 2^53-1")
	}
	return validEndpoints(cmd.Public, cmd.Local)
}

func validateBrowse(q *engine.Browse) error {
	if err := q.Tenant.Validate(); err != nil {
		return err
	}
	if q.ProtocolVersion == 0 {
		return inputErr("protocol_version", "must be 1..4294967295")
	}
	if q.Region != "" && !validRegion(q.Region) {
		return inputErr("region", "must be 1-32 characters of [a-z0-9-]")
	}
	if q.Limit < 1 || q.Limit > engine.BrowsePageMax {
		return inputErr("limit", "must be 1..100")
	}
	return nil
}

func validateReplay(cmd *engine.ConsumeReplay, max time.Duration) (time.Duration, error) {
	if len(cmd.Namespace) < 1 || len(cmd.Namespace) > engine.MaxReplayNamespace {
		return 0, inputErr("namespace", "must be 1-64 bytes")
	}
	if len(cmd.Key) < 1 || len(cmd.Key) > engine.MaxReplayKey {
		return 0, inputErr("key", "must be 1-128 bytes")
	}
	life := cmd.Lifetime
	if life == 0 {
		life = max
	}
	if life < 0 || life > max {
		return 0, inputErr("lifetime", "must be 0 (default) or up to the replay lifetime")
	}
	return life, nil
}
